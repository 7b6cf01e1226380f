// The real dlqd as a child process: started on port 0 with a config of the test's choosing, its
// readiness line read from stdout, stopped with SIGTERM (graceful) or SIGKILL (crash).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace dlq::test {

struct DlqdOptions {
  explicit DlqdOptions(std::string config = "{}", std::string database = "")
      : config_json(std::move(config)), database_url(std::move(database)) {}
  std::string config_json;
  std::string database_url;  // empty: a fresh SQLite file (or PostgreSQL database) per process
  std::vector<std::string> extra_args;
  std::vector<std::string> env;  // "NAME=value"
};

class DlqdProcess {
 public:
  explicit DlqdProcess(DlqdOptions options);
  ~DlqdProcess();
  DlqdProcess(const DlqdProcess&) = delete;
  DlqdProcess& operator=(const DlqdProcess&) = delete;

  unsigned short port() const { return port_; }
  const std::string& database_url() const { return database_url_; }
  pid_t pid() const { return pid_; }
  // SIGTERM, then waits; returns the exit status (or -signal). Throws after `timeout`.
  int terminate(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // SIGKILL, as a crash would.
  void kill9();
  // Everything the process wrote to stderr so far (logs).
  std::string log() const;
  // Replaces the config file the process was started with (for SIGHUP reloads).
  void rewrite_config(const std::string& config_json);
  void signal(int sig);
  bool running();

 private:
  int wait_exit(std::chrono::milliseconds timeout);

  DlqdOptions options_;
  std::string dir_;
  std::string database_url_;
  pid_t pid_ = -1;
  unsigned short port_ = 0;
};

// Runs dlqd with `args` to completion (for --check-config and friends): exit code and output.
struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// `input` is its standard input.
CommandResult run_dlqd(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                       std::chrono::milliseconds timeout = std::chrono::seconds(20),
                       const std::string& input = "");

// Runs any program the same way (dlqctl, the Dockerfile's HEALTHCHECK command, ...).
CommandResult run_program(const std::string& program, const std::vector<std::string>& args,
                          const std::vector<std::string>& env = {},
                          std::chrono::milliseconds timeout = std::chrono::seconds(20),
                          const std::string& input = "");

// The dlqd the tests start: DLQ_TEST_DLQD when set (scripts/test.sh points the Release fault
// tests at the sanitized dlqd that way), else the one built beside the tests.
const char* dlqd_path();

// A database URL for a new, empty database on the backend this run tests.
std::string fresh_database_url(const std::string& dir);

}  // namespace dlq::test
