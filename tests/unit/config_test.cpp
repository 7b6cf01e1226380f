#include <boost/test/unit_test.hpp>

#include "config/config.hpp"
#include "config/database_url.hpp"
#include "config/webhook_url.hpp"

using namespace dlq;

namespace {

std::string config_error(const char* text) {
  try {
    parse_config(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(config)

BOOST_AUTO_TEST_CASE(empty_document_gives_the_documented_defaults) {
  Config c = parse_config("{}");
  BOOST_TEST(c.listen == "127.0.0.1:8080");
  BOOST_TEST(c.database.url == "sqlite:data/dlq.db");
  BOOST_TEST((c.database.sqlite_synchronous == "full"));
  BOOST_TEST(c.limits.max_body_bytes == 1048576);
  BOOST_TEST(c.limits.max_payload_bytes == 262144);
  BOOST_TEST(c.defaults.max_retries == 3);
  BOOST_TEST(c.defaults.visibility_timeout == 30);
  BOOST_TEST(c.defaults.backoff.initial_seconds == 2);
  BOOST_TEST(c.defaults.non_retryable.size() == 4u);  // invalid_input, not_found, auth, uncertain_effect
  BOOST_TEST(!c.testing.allow_clock_override);
  BOOST_TEST(c.redaction.fields.size() == 6u);
}

BOOST_AUTO_TEST_CASE(comments_trailing_commas_and_fractional_durations) {
  Config c = parse_config(R"(
    // a comment
    {
      "limits": { "idle_timeout_seconds": 2.5, },  /* block */
      "defaults": { "backoff": { "initial_seconds": 0.1 } },
    })");
  BOOST_TEST(c.limits.idle_timeout_seconds == 2.5);
  BOOST_TEST(c.defaults.backoff.initial_seconds == 0.1);
}

BOOST_AUTO_TEST_CASE(write_timeout_has_its_own_key) {
  BOOST_TEST(parse_config("{}").limits.write_timeout_seconds == 30);
  Config c = parse_config(R"({"limits": {"write_timeout_seconds": 1.5}})");
  BOOST_TEST(c.limits.write_timeout_seconds == 1.5);
  BOOST_TEST(parse_config(print_config(c)).limits.write_timeout_seconds == 1.5);
  BOOST_TEST(config_error(R"({"limits": {"write_timeout_seconds": 0}})")
                 .find("limits.write_timeout_seconds") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(errors_name_the_key) {
  BOOST_TEST(config_error(R"({"limts": {}})").find("\"limts\": unknown key") != std::string::npos);
  BOOST_TEST(config_error(R"({"limits": {"max_body_bytes": "1"}})").find("limits.max_body_bytes") !=
             std::string::npos);
  BOOST_TEST(config_error(R"({"defaults": {"backoff": {"multiplier": 0}}})")
                 .find("defaults.backoff.multiplier") != std::string::npos);
  BOOST_TEST(config_error(R"({"database": {"url": "mysql://x"}})").find("database.url") !=
             std::string::npos);
  BOOST_TEST(config_error(R"({"queues": {"bad name": {}}})").find("queues.bad name") !=
             std::string::npos);
  BOOST_TEST(config_error(R"({"defaults": {"non_retryable": ["nope"]}})").find("nope") !=
             std::string::npos);
  BOOST_TEST(config_error(R"({"listen": "nowhere"})").find("listen") != std::string::npos);
  // Boost.JSON 1.81 reads 0e400 as NaN, which passed every range (issue 37).
  BOOST_TEST(config_error(R"({"defaults": {"visibility_timeout": 0e400}})")
                 .find("defaults.visibility_timeout") != std::string::npos);
  BOOST_TEST(config_error("[]").find("object") != std::string::npos);
  // Every problem is reported, not just the first.
  std::string both = config_error(R"({"threads": -1, "log": {"level": "loud"}})");
  BOOST_TEST(both.find("threads") != std::string::npos);
  BOOST_TEST(both.find("log.level") != std::string::npos);
}

// Every documented key is built now (the last were retention and alerts); their checks hold.
BOOST_AUTO_TEST_CASE(alerts_and_retention_keys_are_checked_and_merge_per_queue) {
  Config c = parse_config(R"({"alerts": {"webhook_url": "https://hooks.example/x", "dead_depth": 5},
                               "retention": {"dead_seconds": 60},
                               "queues": {"q": {"alerts": {"dead_depth": 2},
                                                "retention": {"succeeded_seconds": 0}}}})");
  BOOST_TEST(c.alerts_for("q").dead_depth == 2);
  BOOST_TEST(c.alerts_for("q").oldest_dead_age_seconds == 86400);
  BOOST_TEST(c.alerts_for("other").dead_depth == 5);
  BOOST_TEST(c.retention_for("q").succeeded_seconds == 0);
  BOOST_TEST(c.retention_for("q").dead_seconds == 60);
  Config again = parse_config(print_config(c));
  BOOST_TEST(again.alerts_for("q").dead_depth == 2);
  BOOST_TEST(again.retention_for("q").succeeded_seconds == 0);
  BOOST_TEST(!again.queues.at("q").retention.dead_seconds.has_value());
  BOOST_TEST(config_error(R"({"alerts": {"webhook_url": "ftp://x"}})").find("alerts.webhook_url") !=
             std::string::npos);
  // Incident events need somewhere to go.
  BOOST_TEST(!c.alerts.on_new_incident);
  BOOST_TEST(config_error(R"({"alerts": {"on_new_incident": true}})")
                 .find("\"alerts.on_new_incident\": true needs alerts.webhook_url") != std::string::npos);
  BOOST_TEST(parse_config(R"({"alerts": {"on_new_incident": true, "webhook_url": "http://127.0.0.1:9"}})")
                 .alerts.on_new_incident);
  BOOST_TEST(config_error(R"({"queues": {"q": {"retention": {"dead_seconds": -1}}}})")
                 .find("queues.q.retention.dead_seconds") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(access_tokens_are_checked_and_print_back) {
  const std::string hash(64, 'a');
  Config c = parse_config(R"({"auth": {"tokens": [{"name": "ops", "token_sha256": ")" + hash +
                          R"(", "roles": ["admin", "reader"]}], "public_metrics": true}})");
  BOOST_REQUIRE_EQUAL(c.auth.tokens.size(), 1u);
  BOOST_TEST(c.auth.tokens[0].name == "ops");
  BOOST_TEST(c.auth.tokens[0].roles == std::vector<std::string>({"admin", "reader"}));
  BOOST_TEST(c.auth.public_metrics);
  Config again = parse_config(print_config(c));
  BOOST_TEST(again.auth.tokens.at(0).token_sha256 == hash);
  BOOST_TEST(again.auth.public_metrics);

  auto one = [](const std::string& token) {
    return config_error((R"({"auth": {"tokens": [)" + token + "]}}").c_str());
  };
  BOOST_TEST(one(R"({"name": "x", "token_sha256": "ABC", "roles": ["admin"]})")
                 .find("auth.tokens[0].token_sha256") != std::string::npos);
  BOOST_TEST(one(R"({"name": "x", "token_sha256": ")" + hash + R"(", "roles": ["root"]})")
                 .find("\"root\" is not a role") != std::string::npos);
  BOOST_TEST(one(R"({"name": "x", "token_sha256": ")" + hash + R"(", "roles": []})")
                 .find("auth.tokens[0].roles") != std::string::npos);
  BOOST_TEST(one(R"({"name": "", "token_sha256": ")" + hash + R"(", "roles": ["admin"]})")
                 .find("auth.tokens[0].name") != std::string::npos);
  // Both are required (the config fuzzer found entries without them accepted, issue 37).
  BOOST_TEST(one(R"({"token_sha256": ")" + hash + R"(", "roles": ["admin"]})")
                 .find("auth.tokens[0].name\": is required") != std::string::npos);
  BOOST_TEST(one(R"({"name": "x", "roles": ["admin"]})")
                 .find("auth.tokens[0].token_sha256\": is required") != std::string::npos);
  BOOST_TEST(one(R"({"name": "x", "token_sha256": ")" + hash + R"(", "roles": ["admin"], "token": "s"})")
                 .find("auth.tokens[0].token\": unknown key") != std::string::npos);
  std::string twice = R"({"name": "x", "token_sha256": ")" + hash + R"(", "roles": ["admin"]})";
  std::string dup = one(twice + "," + twice);  // the same name and the same token twice
  BOOST_TEST(dup.find("auth.tokens[1].name") != std::string::npos);
  BOOST_TEST(dup.find("auth.tokens[1].token_sha256") != std::string::npos);
}

// max_replays: 0..1000 under defaults, a queue and a job type; a queue's replaces the default
// like every queue key, and of the queue's and the job type's the lower non-zero one wins.
BOOST_AUTO_TEST_CASE(max_replays_is_checked_and_the_lower_non_zero_limit_wins) {
  Config c = parse_config(R"({"defaults": {"max_replays": 5},
                               "queues": {"tight": {"max_replays": 2}, "loose": {"max_replays": 8},
                                          "free": {"max_replays": 0}},
                               "job_types": {"charge": {"max_replays": 3}, "mail": {}}})");
  BOOST_TEST(c.max_replays_for("other", std::nullopt) == 5);
  BOOST_TEST(c.max_replays_for("other", std::string("charge")) == 3);
  BOOST_TEST(c.max_replays_for("other", std::string("mail")) == 5);  // 0: no limit of its own
  BOOST_TEST(c.max_replays_for("tight", std::string("charge")) == 2);
  BOOST_TEST(c.max_replays_for("loose", std::nullopt) == 8);
  BOOST_TEST(c.max_replays_for("loose", std::string("charge")) == 3);
  BOOST_TEST(c.max_replays_for("free", std::nullopt) == 0);
  BOOST_TEST(c.max_replays_for("free", std::string("charge")) == 3);
  BOOST_TEST(parse_config("{}").max_replays_for("q", std::nullopt) == 0);
  Config again = parse_config(print_config(c));
  BOOST_TEST(again.max_replays_for("tight", std::string("charge")) == 2);
  BOOST_TEST(again.job_types.at("charge").max_replays == 3);

  BOOST_TEST(config_error(R"({"defaults": {"max_replays": 1001}})").find("defaults.max_replays") !=
             std::string::npos);
  BOOST_TEST(config_error(R"({"defaults": {"max_replays": -1}})").find("defaults.max_replays") !=
             std::string::npos);
  BOOST_TEST(config_error(R"({"queues": {"q": {"max_replays": 2.5}}})")
                 .find("queues.q.max_replays") != std::string::npos);
  BOOST_TEST(config_error(R"({"job_types": {"t": {"max_replays": "3"}}})")
                 .find("job_types.t.max_replays") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(queue_overrides_merge_over_defaults) {
  Config c = parse_config(R"({"defaults": {"max_retries": 4, "visibility_timeout": 10},
                               "queues": {"emails": {"max_retries": 5,
                                                     "non_retryable": ["auth"]}}})");
  BOOST_TEST(c.policy_for("emails").max_retries == 5);
  BOOST_TEST(c.policy_for("emails").visibility_timeout == 10);
  BOOST_TEST(c.policy_for("emails").non_retryable.size() == 1u);
  BOOST_TEST(c.policy_for("other").max_retries == 4);
}

BOOST_AUTO_TEST_CASE(printed_config_reads_back_the_same) {
  Config c = parse_config(R"({"threads": 3, "queues": {"q": {"max_retries": 9}},
                               "redaction": {"fields": ["pin"]}})");
  Config again = parse_config(print_config(c));
  BOOST_TEST(again.threads == 3);
  BOOST_TEST(again.policy_for("q").max_retries == 9);
  BOOST_TEST(again.redaction.fields == std::vector<std::string>{"pin"});
}

BOOST_AUTO_TEST_CASE(database_urls) {
  auto sqlite = parse_database_url("sqlite:data/dlq.db");
  BOOST_TEST((sqlite.backend == DatabaseTarget::Backend::sqlite));
  BOOST_TEST(sqlite.sqlite_path == "data/dlq.db");
  auto pg = parse_database_url("postgresql://dlq:s%20cret@db.local:5433/queue?sslmode=disable");
  BOOST_TEST((pg.backend == DatabaseTarget::Backend::postgresql));
  BOOST_TEST(pg.libpq_conninfo ==
             "host='db.local' port='5433' dbname='queue' user='dlq' password='s cret' sslmode='disable' "
             "connect_timeout='5'");
  auto minimal = parse_database_url("postgres://localhost/db");
  BOOST_TEST(minimal.libpq_conninfo == "host='localhost' dbname='db' connect_timeout='5'");
  auto own_timeout = parse_database_url("postgresql://h/db?connect_timeout=1");
  BOOST_TEST(own_timeout.libpq_conninfo == "host='h' dbname='db' connect_timeout='1'");
  BOOST_CHECK_THROW(parse_database_url("sqlite:"), ConfigError);
  BOOST_CHECK_THROW(parse_database_url("postgresql://h:port/db"), ConfigError);
}

// One parse for the config check and the alert client: what the check lets through, the client
// can connect to.
BOOST_AUTO_TEST_CASE(webhook_urls) {
  auto tls = parse_webhook_url("https://hooks.example/dlq?team=ops");
  BOOST_TEST(tls.tls);
  BOOST_TEST(tls.host == "hooks.example");
  BOOST_TEST(tls.port == "443");
  BOOST_TEST(tls.target == "/dlq?team=ops");
  auto relay = parse_webhook_url("http://127.0.0.1:9000");
  BOOST_TEST(!relay.tls);
  BOOST_TEST(relay.host == "127.0.0.1");
  BOOST_TEST(relay.port == "9000");
  BOOST_TEST(relay.target == "/");
  BOOST_TEST(parse_webhook_url("http://relay.local").port == "80");
  for (const char* bad : {"smtp://x", "ftp://x/y", "http://", "https:///path", "hooks.example/x",
                          "http://a b", ""}) {
    BOOST_CHECK_THROW(parse_webhook_url(bad), ConfigError);
    if (*bad) {
      BOOST_TEST(config_error((R"({"alerts": {"webhook_url": ")" + std::string(bad) + R"("}})").c_str())
                     .find("alerts.webhook_url") != std::string::npos,
                 bad);
    }
  }
  BOOST_TEST(parse_config(R"({"alerts": {"webhook_url": ""}})").alerts.webhook_url.empty());
}

// The rest of what a PostgreSQL URL may hold: a socket directory or an IPv6 address as the host,
// escapes in every part, '+' as itself, and libpq parameters after '?'.
BOOST_AUTO_TEST_CASE(database_url_parts) {
  auto conninfo = [](const char* url) { return parse_database_url(url).libpq_conninfo; };
  BOOST_TEST(conninfo("postgresql://%2Fvar%2Frun%2Fpostgresql/db") ==
             "host='/var/run/postgresql' dbname='db' connect_timeout='5'");
  BOOST_TEST(conninfo("postgresql://u@[::1]:5432/db") ==
             "host='::1' port='5432' dbname='db' user='u' connect_timeout='5'");
  BOOST_TEST(conninfo("postgresql://10.0.0.1:5432/db") ==
             "host='10.0.0.1' port='5432' dbname='db' connect_timeout='5'");
  BOOST_TEST(conninfo("postgresql:///db") == "dbname='db' connect_timeout='5'");
  BOOST_TEST(conninfo("postgresql://h") == "host='h' connect_timeout='5'");
  BOOST_TEST(conninfo("postgresql://h:/db") == "host='h' dbname='db' connect_timeout='5'");
  BOOST_TEST(conninfo("postgresql://:p@h/db") == "host='h' dbname='db' password='p' connect_timeout='5'");
  BOOST_TEST(conninfo("postgresql://u:a:b%27c%5C@h/a%2Fb") ==
             "host='h' dbname='a/b' user='u' password='a:b\\'c\\\\' connect_timeout='5'");
  BOOST_TEST(conninfo("postgresql://u:a+b@h/db?application_name=x+y") ==
             "host='h' dbname='db' user='u' password='a+b' application_name='x+y' connect_timeout='5'");
  // A value may hold '='; a trailing '&' ends the list.
  BOOST_TEST(conninfo("postgresql://h/db?options=-c%20a=b&sslmode=require&") ==
             "host='h' dbname='db' options='-c a=b' sslmode='require' connect_timeout='5'");
}

BOOST_AUTO_TEST_CASE(database_url_errors_say_what_is_wrong_and_keep_the_password) {
  auto error = [](const char* url) -> std::string {
    try {
      parse_database_url(url);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(accepted)";
  };
  for (const char* url : {"postgresql://h/d%zz", "postgresql://u:p%2@h/db", "postgresql://h/db?a=%"}) {
    BOOST_TEST(error(url) == "database URL has a malformed percent escape", url);
  }
  for (const char* url : {"postgresql://h/db?sslmode", "postgresql://h/db?=x",
                          "postgresql://h/db?&sslmode=disable", "postgresql://h/db?a=1&&b=2"}) {
    BOOST_TEST(error(url) == "database URL has a malformed query parameter", url);
  }
  for (const char* url : {"mysql://h/db", "PostgreSQL://h/db", "postgresql:/h/db"}) {
    BOOST_TEST(error(url) == "database URL must start with sqlite: or postgresql://", url);
  }
  for (const char* url : {"postgresql://[::1/db", "postgresql://h:54x/db", "postgresql://u:secret@h:port/db"}) {
    std::string e = error(url);
    BOOST_TEST(e.starts_with("database URL "), url << ": " << e);
    BOOST_TEST(e.find("secret") == std::string::npos, url << ": " << e);
  }
}

BOOST_AUTO_TEST_SUITE_END()
