// What every dlqctl command works with: the parsed flags, the client, where output goes, and
// call(), which turns an answer into JSON or into the exception that decides the exit status.
#pragma once

#include <iosfwd>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "client.hpp"

namespace dlq::ctl {

// Exit statuses (README, "dlqctl").
constexpr int kExitOk = 0;
constexpr int kExitRefused = 1;      // the server said no (4xx), or the operator answered no
constexpr int kExitUsage = 2;
constexpr int kExitUnreachable = 3;  // no answer, a timeout, or a 5xx

// A 4xx answer: the problem, in words.
struct ServerRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A 5xx answer or one that is not JSON: the server could not do its part.
struct ServerFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Flags {
  std::optional<std::string> queue, status, job_type, error_class, dead_reason, since, until,
      before, reason, edit, action, actor, idempotency_key, incident, sort, cursor;
  // A page's key: an id (ls --dead, runs, audit) or a queue name (queues); the server checks it.
  std::optional<std::string> after;
  std::optional<long long> delay, limit, offset, priority, max_retries;
  std::optional<double> rate;
  bool dead = false, dry_run = false, yes = false, force = false, keep_order = false,
       acknowledge = false, no_follow = false, ready = false;
};

struct Invocation {
  std::string command;
  std::vector<std::string> args;  // positional arguments after the command
  Flags flags;
};

struct Session {
  Client& client;
  bool json = false;  // --json: machine-readable stdout, prompts and progress on stderr
  bool tty = false;   // stdout is a terminal: progress bar instead of lines
  std::istream& in;
  std::ostream& out;
  std::ostream& err;

  // The answer's JSON for a 2xx (null for an empty body); throws ServerRefused for 4xx,
  // ServerFailed for 5xx, Unreachable when there is no answer.
  boost::json::value call(const std::string& method, const std::string& target,
                          const boost::json::value* body = nullptr, Reply* reply = nullptr);
  // Prints `v` on stdout as one line of JSON.
  void print_json(const boost::json::value& v);
  // Asks on stderr, reads one line from stdin: true only for "y" or "yes" (any case).
  bool confirm(const std::string& question);
};

// "?a=b&c=d" from the pairs whose value is set (values percent-encoded).
class Query {
 public:
  Query& add(const std::string& key, const std::optional<std::string>& value);
  Query& add(const std::string& key, const std::optional<long long>& value);
  std::string str() const { return text_.empty() ? "" : "?" + text_; }

 private:
  std::string text_;
};

// "/queues/<q>" and "/queues/<q>/messages/<id>[/<action>]", segments percent-encoded.
std::string queue_path(const std::string& queue);
std::string message_path(const std::string& queue, const std::string& id, const std::string& action = "");

int run_view_command(Session& s, const Invocation& inv);    // queues, stats, ls, show, attempts, runs, run, audit, health
int run_action_command(Session& s, const Invocation& inv);  // replay, dismiss, purge, enqueue, run <action>
int run_incident_command(Session& s, const Invocation& inv);  // incidents, incident, mute

}  // namespace dlq::ctl
