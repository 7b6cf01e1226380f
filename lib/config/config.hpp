// The typed configuration of dlqd: defaults in code < JSON file < DLQ_* environment < flags.
// Every key is validated once, here; errors name the key. Keys of features that are not built
// yet are documented but rejected ("not supported yet") rather than accepted and ignored.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/message.hpp"
#include "model/logging.hpp"

namespace dlq {

struct BackoffPolicy {
  double initial_seconds = 2;
  double multiplier = 2;
  double max_seconds = 3600;
  double jitter_seconds = 0;
};

// How long finished messages are kept (0: forever). Dead ones age from dead_at.
struct RetentionPolicy {
  double succeeded_seconds = 604800;
  double dead_seconds = 2592000;
  double dismissed_seconds = 604800;
};

// A queue's own retention: each member that is set replaces the global one.
struct RetentionOverride {
  std::optional<double> succeeded_seconds;
  std::optional<double> dead_seconds;
  std::optional<double> dismissed_seconds;
};

// When a queue's dead letters call for an alert (0: never). The leader checks them.
struct AlertThresholds {
  double dead_depth = 1000;
  double oldest_dead_age_seconds = 86400;
};

// A queue's own thresholds: each member that is set replaces the global one.
struct AlertOverride {
  std::optional<double> dead_depth;
  std::optional<double> oldest_dead_age_seconds;
};

// The retry policy of one queue: `defaults`, overridden key by key under `queues.<name>`.
struct QueuePolicy {
  int max_retries = 3;
  double visibility_timeout = 30;
  int max_lease_expiries = 3;
  BackoffPolicy backoff;
  double retry_window_seconds = 0;
  std::vector<ErrorClass> non_retryable = {ErrorClass::invalid_input, ErrorClass::not_found,
                                           ErrorClass::auth, ErrorClass::uncertain_effect};
  int max_replays = 0;  // replays a message may have (0: no limit); see Config::max_replays_for
  RetentionOverride retention;  // queues.<name>.retention only
  AlertOverride alerts;          // queues.<name>.alerts only
};

struct JobTypePolicy {
  bool idempotent = true;
  double replay_rate_per_second = 0;  // 0: no per-type cap
  int max_replays = 0;                // 0: no limit of its own
};

struct AuthToken {
  std::string name;
  std::string token_sha256;
  std::vector<std::string> roles;
};

// An SQS access key (issue 38): SigV4 requests signed with it act as `name` with `roles`. The
// secret is read from `secret_file` at start and at SIGHUP; it is never printed or logged.
struct SqsAccessKey {
  std::string name;
  std::string access_key_id;
  std::string secret_file;
  std::vector<std::string> roles;
  std::string secret;  // the file's content, one trailing newline stripped (not a config key)
};

struct Config {
  std::string listen = "127.0.0.1:8080";
  std::string problem_base = "https://dlq.dev/problems";
  struct Database {
    std::string url = "sqlite:data/dlq.db";
    int pool_size = 4;
    std::string sqlite_synchronous = "full";
    int group_commit_max_batch = 256;
    int group_commit_max_wait_us = 0;
    // PostgreSQL: after the leader dies or loses its lock connection, another node leads within
    // this bound.
    double leader_takeover_seconds = 5;
    // PostgreSQL: how long connecting may take (a `connect_timeout` in the URL wins), and how long
    // one statement may run, before the request is answered 503.
    int connect_timeout_seconds = 5;
    double statement_timeout_seconds = 30;
  } database;
  int threads = 0;
  struct Limits {
    long long max_body_bytes = 1048576;
    long long max_payload_bytes = 262144;
    int max_connections = 10000;
    double header_timeout_seconds = 10;
    double idle_timeout_seconds = 75;
    // Each write of an answer (a whole answer, or one chunk of a streamed one) must finish
    // within this; a client that does not read is disconnected instead of pinning its answer.
    double write_timeout_seconds = 30;
    // The most queues that may hold messages (0: no limit); a new queue beyond it is refused.
    long long max_queues = 100000;
    // The most side effects one message may hold (POST .../effects, issue 36).
    int max_effects_per_message = 100;
  } limits;
  QueuePolicy defaults;
  std::map<std::string, QueuePolicy, std::less<>> queues;
  std::map<std::string, JobTypePolicy, std::less<>> job_types;
  struct Retention : RetentionPolicy {
    double sweep_interval_seconds = 60;
  } retention;
  struct Auth {
    std::vector<AuthToken> tokens;
    bool allow_anonymous = false;
    bool public_metrics = false;
  } auth;
  struct Redaction {
    std::vector<std::string> fields = {"password", "token",       "secret",
                                       "authorization", "card_number", "api_key"};
  } redaction;
  struct BatchReplay {
    double preview_ttl_seconds = 600;
    double default_rate_per_second = 10;
    // The most unexpired previews (every node's, replay and dismiss): a new one drops the oldest.
    int max_previews = 100;
  } batch_replay;
  struct Trials {
    // A trial nobody claimed for this long expires (issue 36).
    double timeout_seconds = 60;
  } trials;
  struct Alerts : AlertThresholds {
    std::string webhook_url;  // empty: no alerts
    double min_interval_seconds = 300;
    std::string ca_file;      // empty: the system's CA store
    double timeout_seconds = 5;
    bool on_new_incident = false;  // incident_opened / incident_grew events (needs webhook_url)
  } alerts;
  struct Log {
    log::Level level = log::Level::info;
    log::Format format = log::Format::json;
    bool access = true;  // one line per request
  } log;
  struct Metrics {
    double cache_seconds = 1;
    int max_queue_labels = 1000;
    int max_incident_labels = 20;  // incidents with a label of their own in dlq_incident_dead
  } metrics;
  struct Ui {
    // Serve /ui/ from this folder instead of the files built into dlqd (for developing the
    // UI); empty: the built-in copy.
    std::string dir;
  } ui;
  // Who may address dlqd from a browser (docs/access.md, "Host and Origin"): names Host may carry
  // besides loopback and the host of `listen` (checked while no tokens are in force), and origins
  // whose POST, PUT, PATCH and DELETE are accepted although they are not the server's own.
  struct Http {
    std::vector<std::string> allowed_hosts;
    std::vector<std::string> allowed_origins;
  } http;
  // The SQS front (docs/sqs.md): queue URLs are <public_url>/<account_id>/<queue>.
  struct Sqs {
    std::string public_url;  // empty: http://<listen address as bound>
    std::string region = "us-east-1";
    std::string account_id = "000000000000";
    std::vector<SqsAccessKey> access_keys;
  } sqs;
  struct Testing {
    bool allow_clock_override = false;
    // SQLite: the most pages the database file may hold (PRAGMA max_page_count); 0: no limit.
    // Lets tests fill the "disk" without a small mount.
    long long sqlite_max_page_count = 0;
    // Faults injected on purpose for the fault tests (docs/reliability.md). Refused unless dlqd
    // runs with --allow-testing-faults; all but answer_before_commit are SQLite's.
    struct Faults {
      bool answer_before_commit = false;  // answer each write before its group's COMMIT
      bool sqlite_power_loss = false;     // unsynced writes live in memory until a sync
      long long power_cut_at_sync = 0;    // at the Nth sync: pause, drop held writes, _exit(137)
      bool power_cut_tear = false;        // at the cut, a prefix of the held writes lands, torn
      long long fail_call = 0;            // the Nth read, write, sync or truncate fails once
      std::string fail_with = "ioerr";    // or "full" (writes only)
      // The keys the config file gave (not printed): what --allow-testing-faults must allow.
      std::vector<std::string> given;
    } faults;
  } testing;

  // The policy of one queue (its overrides merged over `defaults`).
  const QueuePolicy& policy_for(std::string_view queue) const;
  // The retention of one queue: its own values merged over `retention`.
  RetentionPolicy retention_for(std::string_view queue) const;
  AlertThresholds alerts_for(std::string_view queue) const;
  // How many replays a message of this queue and job type may have (0: no limit): the queue's
  // max_replays (its own, or `defaults`') and its job type's, the lower non-zero one.
  int max_replays_for(std::string_view queue, const std::optional<std::string>& job_type) const;
};

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What the command line contributes on top of the file and the environment.
struct ConfigOverrides {
  std::optional<std::string> listen;
  std::optional<std::string> database_url;
  bool allow_testing_faults = false;  // --allow-testing-faults: testing.faults.* may be given
};

// Parses a config document (comments and trailing commas allowed) over the defaults.
Config parse_config(std::string_view json_text);
// Reads the file (or starts from `{}` without one), then applies DLQ_LISTEN, DLQ_DATABASE_URL,
// DLQ_LOG_LEVEL from `getenv`, then the flags; validates the result and reads the SQS secret
// files (so SIGHUP's reload, which calls it again, reads them again).
Config load_config(const std::optional<std::string>& path, const ConfigOverrides& flags);
// The merged configuration as a JSON document (only keys that are supported).
std::string print_config(const Config& config);

// Whether dlqd serves the SQS front (docs/sqs.md): with sqs.access_keys, or with neither keys nor
// auth.tokens (anonymous). With tokens and no keys every SQS request is refused.
bool sqs_front_served(const Config& config);
// Reads each sqs.access_keys[i].secret_file into `secret` (one trailing newline stripped).
// load_config already does; throws ConfigError naming the key and the file of each one that is
// missing, unreadable, empty or readable by group or others, never the content.
void load_sqs_secrets(Config& config);

// One key of the configuration, as docs/configuration.md must list it.
struct ConfigKey {
  std::string key;            // dotted path; `<name>` for user-chosen names, `[]` for list items
  std::string type;           // integer, number, string, boolean, string list, object list
  std::string default_json;   // the default as JSON; empty when the key has none of its own
  std::string overridden_by;  // the environment variable and flag that override it, if any
};
// Every key the parser accepts, from the same visit_* lists that parse and print, in order.
std::vector<ConfigKey> config_keys();

}  // namespace dlq
