// Config parsing and printing share one list of keys (visit_config): a Parser visitor reads the
// JSON document into the struct, a Printer visitor writes the struct back out, so the two can
// never disagree about which keys exist.
#include "config/config.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <boost/json.hpp>

#include "config/auth_config.hpp"
#include "config/database_url.hpp"
#include "config/key_visitors.hpp"
#include "config/sqs_config.hpp"
#include "config/web_origin.hpp"
#include "config/webhook_url.hpp"

namespace dlq {
namespace json = boost::json;
namespace {

using config_detail::check_role;
using config_detail::check_sha256_hex;
using config_detail::check_token_name;
using config_detail::check_tokens;
using config_detail::join;
using config_detail::KeyLister;
using config_detail::Parser;
using config_detail::Printer;

std::optional<std::string> check_listen(const std::string& s) {
  auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) return "must be HOST:PORT";
  std::string port = s.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      std::stoi(port) > 65535) {
    return "must be HOST:PORT with a port from 0 to 65535";
  }
  return std::nullopt;
}

std::optional<std::string> check_database_url(const std::string& s) {
  try {
    (void)parse_database_url(s);
    return std::nullopt;
  } catch (const ConfigError& e) {
    return std::string(e.what());
  }
}

std::optional<std::string> check_synchronous(const std::string& s) {
  if (s == "full" || s == "normal") return std::nullopt;
  return "must be \"full\" or \"normal\"";
}

std::optional<std::string> check_file_name(const std::string& s) {
  if (s.empty()) return "must name a file";
  return std::nullopt;
}

const std::vector<std::pair<log::Level, std::string>> kLevels = {
    {log::Level::debug, "debug"}, {log::Level::info, "info"},
    {log::Level::warn, "warn"},   {log::Level::error, "error"}};
const std::vector<std::pair<log::Format, std::string>> kFormats = {{log::Format::json, "json"},
                                                                   {log::Format::text, "text"}};

template <class V>
void visit_policy(V& v, QueuePolicy& p) {
  v.integer("max_retries", p.max_retries, 1, 10);
  v.number("visibility_timeout", p.visibility_timeout, 1, 43200);
  v.integer("max_lease_expiries", p.max_lease_expiries, 1, 1000);
  v.object("backoff", [&p](V& b) {
    b.number("initial_seconds", p.backoff.initial_seconds, 0, 86400);
    b.number("multiplier", p.backoff.multiplier, 1, 100);
    b.number("max_seconds", p.backoff.max_seconds, 0, 7 * 86400);
    b.number("jitter_seconds", p.backoff.jitter_seconds, 0, 86400);
  });
  v.number("retry_window_seconds", p.retry_window_seconds, 0, 365.0 * 86400);
  v.error_classes("non_retryable", p.non_retryable);
  v.integer("max_replays", p.max_replays, 0, 1000);
}

// An object of a queue's own (queues.<name>.retention, .alerts) whose members, when given,
// override the global ones; the printer shows only those given.
template <class V>
void visit_overrides(V& v, const char* key,
                     std::initializer_list<std::pair<const char*, std::optional<double>*>> members,
                     double max) {
  if constexpr (std::is_same_v<V, config_detail::Printer>) {
    bool any = false;
    for (const auto& [name, value] : members) any = any || value->has_value();
    if (!any) return;
  }
  v.object(key, [&](V& o) {
    for (const auto& [name, value] : members) {
      if constexpr (std::is_same_v<V, config_detail::Parser>) {
        double parsed = -1;
        o.number(name, parsed, 0, max);
        if (parsed >= 0) *value = parsed;
      } else if constexpr (std::is_same_v<V, config_detail::KeyLister>) {
        o.unset(name, "number");  // defaults to the global key of the same name
      } else if (*value) {
        o.number(name, **value, 0, max);
      }
    }
  });
}

template <class V>
void visit_queue_overrides(V& v, QueuePolicy& p) {
  visit_overrides(v, "retention",
                  {{"succeeded_seconds", &p.retention.succeeded_seconds},
                   {"dead_seconds", &p.retention.dead_seconds},
                   {"dismissed_seconds", &p.retention.dismissed_seconds}},
                  1e10);
  visit_overrides(v, "alerts",
                  {{"dead_depth", &p.alerts.dead_depth},
                   {"oldest_dead_age_seconds", &p.alerts.oldest_dead_age_seconds}},
                  1e10);
}

std::optional<std::string> check_webhook_url(const std::string& s) {
  if (s.empty()) return std::nullopt;  // no alerts
  try {
    (void)parse_webhook_url(s);
    return std::nullopt;
  } catch (const ConfigError& e) {
    return std::string(e.what());
  }
}

template <class V>
void visit_job_type(V& j, JobTypePolicy& policy) {
  j.boolean("idempotent", policy.idempotent);
  j.number("replay_rate_per_second", policy.replay_rate_per_second, 0, 1000);
  j.integer("max_replays", policy.max_replays, 0, 1000);
}

template <class V>
void visit_database(V& d, Config::Database& db) {
  d.string("url", db.url, check_database_url);
  d.integer("pool_size", db.pool_size, 1, 64);
  d.string("sqlite_synchronous", db.sqlite_synchronous, check_synchronous);
  d.object("group_commit", [&db](V& g) {
    g.integer("max_batch", db.group_commit_max_batch, 1, 10000);
    g.integer("max_wait_us", db.group_commit_max_wait_us, 0, 100000);
  });
  d.number("leader_takeover_seconds", db.leader_takeover_seconds, 1, 3600);
  d.integer("connect_timeout_seconds", db.connect_timeout_seconds, 2, 3600);
  d.number("statement_timeout_seconds", db.statement_timeout_seconds, 0.1, 86400);
}

template <class V>
void visit_common(V& v, Config& c) {
  v.string("listen", c.listen, check_listen);
  v.string("problem_base", c.problem_base);
  v.object("database", [&c](V& d) { visit_database(d, c.database); });
  v.integer("threads", c.threads, 0, 256);
  v.object("limits", [&c](V& l) {
    l.integer("max_body_bytes", c.limits.max_body_bytes, 1024, 64LL * 1024 * 1024);
    l.integer("max_payload_bytes", c.limits.max_payload_bytes, 1, 64LL * 1024 * 1024);
    l.integer("max_connections", c.limits.max_connections, 1, 1000000);
    l.number("header_timeout_seconds", c.limits.header_timeout_seconds, 0.1, 3600);
    l.number("idle_timeout_seconds", c.limits.idle_timeout_seconds, 0.1, 86400);
    l.number("write_timeout_seconds", c.limits.write_timeout_seconds, 0.1, 3600);
    l.integer("max_queues", c.limits.max_queues, 0, 1000000000);
    l.integer("max_effects_per_message", c.limits.max_effects_per_message, 1, 10000);
  });
  v.object("defaults", [&c](V& d) { visit_policy(d, c.defaults); });
}

template <class V>
void visit_tail(V& v, Config& c) {
  v.object("retention", [&c](V& r) {
    r.number("succeeded_seconds", c.retention.succeeded_seconds, 0, 1e10);
    r.number("dead_seconds", c.retention.dead_seconds, 0, 1e10);
    r.number("dismissed_seconds", c.retention.dismissed_seconds, 0, 1e10);
    r.number("sweep_interval_seconds", c.retention.sweep_interval_seconds, 1, 86400);
  });
  v.object("auth", [&c](V& a) {
    a.template object_array<AuthToken>("tokens", c.auth.tokens, [](V& t, AuthToken& token) {
      t.string("name", token.name, check_token_name);
      t.string("token_sha256", token.token_sha256, check_sha256_hex);
      t.strings("roles", token.roles, check_role);
      // Without a name or a hash the entry matches no caller, and --print-config would write a
      // file that parse_config refuses.
      if constexpr (std::is_same_v<V, Parser>) t.required({"name", "token_sha256"});
    });
    a.boolean("allow_anonymous", c.auth.allow_anonymous);
    a.boolean("public_metrics", c.auth.public_metrics);
  });
  v.object("redaction", [&c](V& r) { r.strings("fields", c.redaction.fields); });
  v.object("batch_replay", [&c](V& b) {
    b.number("preview_ttl_seconds", c.batch_replay.preview_ttl_seconds, 1, 86400);
    b.number("default_rate_per_second", c.batch_replay.default_rate_per_second, 0.1, 1000);
    b.integer("max_previews", c.batch_replay.max_previews, 1, 10000);
  });
  v.object("trials", [&c](V& t) {
    t.number("timeout_seconds", c.trials.timeout_seconds, 0.1, 86400);
  });
  v.object("alerts", [&c](V& a) {
    a.string("webhook_url", c.alerts.webhook_url, check_webhook_url);
    a.number("min_interval_seconds", c.alerts.min_interval_seconds, 0, 1e7);
    a.string("ca_file", c.alerts.ca_file);
    a.number("timeout_seconds", c.alerts.timeout_seconds, 0.1, 300);
    a.number("dead_depth", c.alerts.dead_depth, 0, 1e10);
    a.number("oldest_dead_age_seconds", c.alerts.oldest_dead_age_seconds, 0, 1e10);
    a.boolean("on_new_incident", c.alerts.on_new_incident);
  });
  v.object("log", [&c](V& l) {
    l.choice("level", c.log.level, kLevels);
    l.choice("format", c.log.format, kFormats);
    l.boolean("access", c.log.access);
  });
  v.object("metrics", [&c](V& m) {
    m.number("cache_seconds", c.metrics.cache_seconds, 0, 3600);
    m.integer("max_queue_labels", c.metrics.max_queue_labels, 1, 100000);
    m.integer("max_incident_labels", c.metrics.max_incident_labels, 0, 1000);
  });
  v.object("ui", [&c](V& u) { u.string("dir", c.ui.dir); });
  v.object("http", [&c](V& h) {
    h.strings("allowed_hosts", c.http.allowed_hosts, check_allowed_host);
    h.strings("allowed_origins", c.http.allowed_origins, check_allowed_origin);
  });
  v.object("sqs", [&c](V& s) {
    s.string("public_url", c.sqs.public_url, config_detail::check_sqs_public_url);
    s.string("region", c.sqs.region, config_detail::check_sqs_region);
    s.string("account_id", c.sqs.account_id, config_detail::check_sqs_account_id);
    // The secret itself is no key: it is read from secret_file (load_config), never printed.
    s.template object_array<SqsAccessKey>(
        "access_keys", c.sqs.access_keys, [](V& k, SqsAccessKey& key) {
          k.string("name", key.name, check_token_name);
          k.string("access_key_id", key.access_key_id, config_detail::check_sqs_access_key_id);
          k.string("secret_file", key.secret_file, check_file_name);
          k.strings("roles", key.roles, check_role);
          if constexpr (std::is_same_v<V, Parser>) {
            k.required({"name", "access_key_id", "secret_file"});
          }
        });
  });
  v.object("testing", [&c](V& t) {
    t.boolean("allow_clock_override", c.testing.allow_clock_override);
    t.integer("sqlite_max_page_count", c.testing.sqlite_max_page_count, 0, 1LL << 40);
    t.object("faults", [&c](V& f) {
      auto& x = c.testing.faults;
      f.boolean("answer_before_commit", x.answer_before_commit);
      f.boolean("sqlite_power_loss", x.sqlite_power_loss);
      f.integer("power_cut_at_sync", x.power_cut_at_sync, 0, 1LL << 40);
      f.boolean("power_cut_tear", x.power_cut_tear);
      f.integer("fail_call", x.fail_call, 0, 1LL << 40);
      f.string("fail_with", x.fail_with, [](const std::string& v) -> std::optional<std::string> {
        if (v == "ioerr" || v == "full") return std::nullopt;
        return "must be one of \"ioerr\", \"full\"";
      });
    });
  });
}

std::optional<std::string> check_queue_name(std::string_view name) {
  if (valid_queue_name(name)) return std::nullopt;
  return "is not a valid queue name ([A-Za-z0-9_-]{1,64})";
}

std::optional<std::string> check_job_type(std::string_view name) {
  if (!name.empty() && name.size() <= 128) return std::nullopt;
  return "is not a valid job type (1 to 128 characters)";
}

void parse_into(const json::object& root, Config& c, std::vector<std::string>& errors) {
  Parser v(&root, "", errors);
  visit_common(v, c);
  // Per-queue policies start from the (already parsed) defaults.
  v.named_objects("queues", check_queue_name, [&c](std::string_view name, Parser& q) {
    QueuePolicy policy = c.defaults;
    visit_policy(q, policy);
    visit_queue_overrides(q, policy);
    c.queues.insert_or_assign(std::string(name), std::move(policy));
  });
  v.named_objects("job_types", check_job_type, [&c](std::string_view name, Parser& j) {
    JobTypePolicy policy;
    visit_job_type(j, policy);
    c.job_types.insert_or_assign(std::string(name), policy);
  });
  visit_tail(v, c);
  v.finish();
  check_tokens(c.auth.tokens, errors);
  config_detail::check_sqs_access_keys(c, errors);
  config_detail::normalize_sqs_public_url(c.sqs.public_url);
  if (c.alerts.on_new_incident && c.alerts.webhook_url.empty()) {
    errors.push_back("config key \"alerts.on_new_incident\": true needs alerts.webhook_url "
                     "(where the incident events go)");
  }
}

// The keys under testing.faults that a (valid) config document gives.
std::vector<std::string> given_fault_keys(const json::object& root) {
  std::vector<std::string> keys;
  const json::value* testing = root.if_contains("testing");
  const json::value* faults = testing ? testing->as_object().if_contains("faults") : nullptr;
  if (faults == nullptr) return keys;
  for (const auto& member : faults->as_object()) keys.emplace_back(member.key());
  return keys;
}

// testing.faults.* arm only with --allow-testing-faults (no environment variable can: a config
// file copied to production arms nothing), and all but answer_before_commit only on SQLite.
void check_fault_keys(const Config& c, const ConfigOverrides& flags,
                      std::vector<std::string>& errors) {
  bool postgresql = false;
  try {
    postgresql = parse_database_url(c.database.url).backend == DatabaseTarget::Backend::postgresql;
  } catch (const std::exception&) {
    return;  // the URL's own error is reported already
  }
  for (const auto& key : c.testing.faults.given) {
    const std::string name = "config key \"testing.faults." + key + "\": ";
    if (!flags.allow_testing_faults) {
      errors.push_back(name + "only with --allow-testing-faults");
    } else if (postgresql && key != "answer_before_commit") {
      errors.push_back(name + "SQLite's only; the database is PostgreSQL");
    }
  }
}

void throw_if_errors(const std::vector<std::string>& errors) {
  if (errors.empty()) return;
  std::string text;
  for (const auto& e : errors) text += (text.empty() ? "" : "\n") + e;
  throw ConfigError(text);
}

std::optional<log::Level> parse_level(std::string_view s) {
  for (const auto& [level, name] : kLevels) {
    if (name == s) return level;
  }
  return std::nullopt;
}

// Boost.JSON 1.81 has no pretty printer; --print-config is read by people.
void pretty_print(std::string& out, const json::value& v, int indent) {
  std::string pad(static_cast<std::size_t>(indent + 2), ' ');
  if (v.is_object()) {
    const auto& obj = v.get_object();
    if (obj.empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    bool first = true;
    for (const auto& [key, value] : obj) {
      if (!first) out += ",\n";
      first = false;
      out += pad + json::serialize(json::string(key)) + ": ";
      pretty_print(out, value, indent + 2);
    }
    out += "\n" + std::string(static_cast<std::size_t>(indent), ' ') + "}";
  } else {
    out += json::serialize(v);
  }
}

}  // namespace

Config parse_config(std::string_view text) {
  json::parse_options options;
  options.allow_comments = true;
  options.allow_trailing_commas = true;
  std::error_code ec;
  json::value root = json::parse(text, ec, {}, options);
  if (ec) throw ConfigError("config is not valid JSON: " + ec.message());
  if (!root.is_object()) throw ConfigError("config must be a JSON object");
  Config c;
  std::vector<std::string> errors;
  parse_into(root.get_object(), c, errors);
  throw_if_errors(errors);
  c.testing.faults.given = given_fault_keys(root.get_object());
  return c;
}

// The keys the environment and the flags override (load_config below applies them; the
// configuration reference lists them: tests/unit/config_test.cpp).
const std::vector<std::pair<std::string_view, std::string_view>> kOverriddenBy = {
    {"listen", "DLQ_LISTEN, --listen"},
    {"database.url", "DLQ_DATABASE_URL, --db"},
    {"log.level", "DLQ_LOG_LEVEL"}};

Config load_config(const std::optional<std::string>& path, const ConfigOverrides& flags) {
  Config c;
  if (path) {
    std::ifstream in(*path, std::ios::binary);
    if (!in) throw ConfigError("cannot read config file \"" + *path + "\"");
    std::stringstream buffer;
    buffer << in.rdbuf();
    c = parse_config(buffer.str());
  }
  std::vector<std::string> errors;
  auto apply = [&errors](const char* source, const std::string& value, std::string& field,
                         std::optional<std::string> (*check)(const std::string&)) {
    if (auto problem = check(value)) {
      errors.push_back(std::string(source) + ": " + *problem);
    } else {
      field = value;
    }
  };
  if (const char* v = std::getenv("DLQ_LISTEN")) apply("DLQ_LISTEN", v, c.listen, check_listen);
  if (const char* v = std::getenv("DLQ_DATABASE_URL")) {
    apply("DLQ_DATABASE_URL", v, c.database.url, check_database_url);
  }
  if (const char* v = std::getenv("DLQ_LOG_LEVEL")) {
    if (auto level = parse_level(v)) {
      c.log.level = *level;
    } else {
      errors.push_back("DLQ_LOG_LEVEL: must be one of debug, info, warn, error");
    }
  }
  if (flags.listen) apply("--listen", *flags.listen, c.listen, check_listen);
  if (flags.database_url) apply("--db", *flags.database_url, c.database.url, check_database_url);
  check_fault_keys(c, flags, errors);
  config_detail::check_sqs_public_url_needed(c, errors);
  config_detail::read_sqs_secrets(c, errors);
  throw_if_errors(errors);
  return c;
}

std::string print_config(const Config& config) {
  Config c = config;
  json::object root;
  Printer p(root, "");
  visit_common(p, c);
  p.named<decltype(c.queues)>("queues", c.queues, [](Printer& q, QueuePolicy& policy) {
    visit_policy(q, policy);
    visit_queue_overrides(q, policy);
  });
  p.named<decltype(c.job_types)>("job_types", c.job_types, [](Printer& j, JobTypePolicy& policy) {
    visit_job_type(j, policy);
  });
  visit_tail(p, c);
  // Faults show only when given, so that a printed configuration loads without the flag.
  if (c.testing.faults.given.empty()) root["testing"].as_object().erase("faults");
  std::string out;
  pretty_print(out, root, 0);
  out += '\n';
  return out;
}

std::vector<ConfigKey> config_keys() {
  std::vector<ConfigKey> keys;
  Config c;
  KeyLister v(keys, "");
  visit_common(v, c);
  // User-named entries: a queue's policy starts from `defaults`, so its keys show those defaults.
  KeyLister queue(keys, "queues.<name>");
  QueuePolicy policy = c.defaults;
  visit_policy(queue, policy);
  visit_queue_overrides(queue, policy);
  KeyLister job_type(keys, "job_types.<name>");
  JobTypePolicy job_policy;
  visit_job_type(job_type, job_policy);
  visit_tail(v, c);
  for (auto& k : keys) {
    for (const auto& [key, by] : kOverriddenBy) {
      if (k.key == key) k.overridden_by = by;
    }
  }
  return keys;
}

}  // namespace dlq
