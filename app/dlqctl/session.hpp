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
constexpr int kExitUnreachable = 3;  // no answer, a timeout, a 5xx, or one that is not dlq's
constexpr int kExitInterrupted = 130;  // Ctrl-C while following a run (128 + SIGINT)

// A 4xx answer: the problem, in words, and the answer (for commands that add a hint).
struct ServerRefused : std::runtime_error {
  ServerRefused(const std::string& words, int status, std::string body)
      : std::runtime_error(words), status(status), body(std::move(body)) {}
  int status;
  std::string body;
};
// A 5xx answer or one that is not JSON: the server could not do its part.
struct ServerFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Flags {
  std::optional<std::string> queue, status, job_type, error_class, dead_reason, since, until,
      before, reason, edit, action, actor, idempotency_key, incident, sort, cursor, order;
  // A page's key: an id (ls --dead, runs, audit) or a queue name (queues); the server checks it.
  std::optional<std::string> after;
  std::optional<long long> delay, limit, offset, priority, max_retries;
  std::optional<double> rate;
  // replay Q ID --resolve-effect KEY=done|forget, as often as there are keys.
  std::optional<std::vector<std::string>> resolve_effects;
  bool dead = false, dry_run = false, yes = false, force = false, keep_order = false,
       acknowledge = false, no_follow = false, ready = false, retrying = false, full = false,
       follow = false, not_json = false, wait = false;
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
  std::size_t columns = 0;  // the width tables fit (0: no limit)

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

// A queue's stats that count nothing: no message was ever in it (or all were purged). The
// server takes every valid name as a queue, so a typo ("emial") would read as "nothing here".
inline constexpr const char* kStatsCounts[] = {"ready", "scheduled", "processing",
                                               "succeeded", "dead", "dismissed"};
bool never_used(const boost::json::value& stats);
std::string unused_queue_sentence(const std::string& queue);
// Asks for the queue's stats and, if it was never used, says so on stderr (a hint only: a
// failure to ask is ignored).
void name_if_unused(Session& s, const std::string& queue);

// fn()'s answer; a 404 from it first names the queue if it was never used, then goes on.
template <class Fn>
boost::json::value on_message(Session& s, const std::string& queue, Fn fn) {
  try {
    return fn();
  } catch (const ServerRefused& e) {
    if (e.status == 404) name_if_unused(s, queue);
    throw;
  }
}

// Follows a replay run until it is done or cancelled; Ctrl-C stops following (exit 130).
int follow_run(Session& s, long long id);

int run_view_command(Session& s, const Invocation& inv);    // queues, stats, ls, show, attempts, runs, run, audit, health
int run_action_command(Session& s, const Invocation& inv);  // replay, dismiss, purge, enqueue, run <action>
int run_incident_command(Session& s, const Invocation& inv);  // incidents, incident, mute

}  // namespace dlq::ctl
