// dlqctl: the operators' command-line client of dlqd's HTTP API. This file parses the command
// line (which flags each command takes), builds the session and maps outcomes to exit statuses:
// 0 ok, 1 the server said no (or the operator answered no), 2 bad usage, 3 no usable answer.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <set>

#include <boost/program_options.hpp>

#include "model/time.hpp"
#include "model/token_hash.hpp"
#include "session.hpp"

namespace po = boost::program_options;
using namespace dlq::ctl;

namespace {

constexpr const char* kUsage = R"(dlqctl: operate a dlqd server over its HTTP API
Usage: dlqctl [--url URL] [--token TOKEN] [--ca-file PEM] [--json] COMMAND [ARGS] [FLAGS]

Commands:
  queues                                 every queue with its counts
  stats Q                                one queue's counts
  ls --queue Q [--status S]              a queue's messages (--limit, --offset)
  ls --dead [FILTER]                     dead messages across queues (--limit, --after)
  show Q ID                              one message
  attempts Q ID                          a message's attempt history
  replay Q ID [--reason R] [--edit FILE|-] [--delay S] [--force] [--dry-run]
  replay --dead [FILTER] [--rate N] [--delay S] [--reason R] [--keep-order]
         [--acknowledge-side-effects] [--no-follow] [--dry-run] [--yes]
                                         preview, ask, start a run and follow it
  runs                                   replay runs, newest first (--limit, --after)
  run ID [pause|resume|cancel]           show or change a replay run
  dismiss Q ID --reason R                a dead message: won't fix
  dismiss --dead [FILTER] --reason R [--dry-run] [--yes]
  purge Q --status succeeded|dead|dismissed [--before T] [--yes]
  audit [--action A] [--actor N] [--queue Q] [--since T] [--until T]
  enqueue Q PAYLOAD|- [--job-type T] [--idempotency-key K] [--delay S]
         [--priority P] [--max-retries N]
  health [--ready]                       GET /healthz (or /readyz); for health checks
  hash-token                             SHA-256 of the token on stdin (as dlqd hash-token)

FILTER: --queue Q --job-type T --error-class C --dead-reason R --since T --until T
        (in `ls --dead`, --reason R also filters by dead reason)
Times: RFC 3339 (2026-06-01T00:00:00Z) or "YYYY-MM-DD HH:MM:SS" (UTC).
Environment: DLQ_URL (default http://127.0.0.1:8080; https:// for a TLS proxy in front of
             dlqd), DLQ_TOKEN, DLQ_CA_FILE.
Exit status: 0 ok; 1 the server refused (the problem is printed) or you answered no;
             2 bad usage; 3 the server could not be reached, timed out or failed (5xx).

Options)";

struct CommandSpec {
  std::size_t min_args, max_args;
  std::set<std::string> options;
};

const std::set<std::string> kFilter = {"queue", "job-type", "error-class", "dead-reason", "since", "until"};

std::set<std::string> with_filter(std::set<std::string> extra) {
  extra.insert(kFilter.begin(), kFilter.end());
  return extra;
}

// Which flags each command (and form) accepts; anything else is bad usage.
CommandSpec spec_for(const std::string& command, bool dead) {
  static const std::map<std::string, CommandSpec> plain = {
      {"queues", {0, 0, {}}},
      {"stats", {1, 1, {}}},
      {"ls", {0, 0, {"queue", "status", "limit", "offset"}}},
      {"show", {2, 2, {}}},
      {"attempts", {2, 2, {}}},
      {"replay", {2, 2, {"reason", "edit", "delay", "force", "dry-run"}}},
      {"runs", {0, 0, {"limit", "after"}}},
      {"run", {1, 2, {}}},
      {"dismiss", {2, 2, {"reason"}}},
      {"purge", {1, 1, {"status", "before", "yes"}}},
      {"audit", {0, 0, {"action", "actor", "queue", "since", "until", "limit", "after"}}},
      {"enqueue", {2, 2, {"job-type", "idempotency-key", "delay", "priority", "max-retries"}}},
      {"health", {0, 0, {"ready"}}},
      {"hash-token", {0, 0, {}}},
  };
  static const std::map<std::string, CommandSpec> dead_forms = {
      {"ls", {0, 0, with_filter({"dead", "reason", "limit", "after"})}},
      {"replay", {0, 0, with_filter({"dead", "rate", "delay", "reason", "keep-order",
                                     "acknowledge-side-effects", "no-follow", "dry-run", "yes"})}},
      {"dismiss", {0, 0, with_filter({"dead", "reason", "dry-run", "yes"})}},
  };
  if (dead) {
    auto it = dead_forms.find(command);
    if (it == dead_forms.end()) throw UsageError("--dead does not apply to " + command);
    return it->second;
  }
  auto it = plain.find(command);
  if (it == plain.end()) throw UsageError("unknown command: " + command);
  return it->second;
}

void check_time(const std::optional<std::string>& t, const char* flag) {
  if (t && !dlq::parse_timestamp(*t)) {
    throw UsageError(std::string("--") + flag + ": not a time: " + *t +
                     " (use RFC 3339 or \"YYYY-MM-DD HH:MM:SS\")");
  }
}

struct Global {
  std::string url, token, ca_file;
  bool json = false;
  double timeout_s = 30;
};

Invocation parse(int argc, char** argv, Global& g, bool& help) {
  po::options_description desc(kUsage);
  Flags f;
  std::string queue, status, job_type, error_class, dead_reason, since, until, before, reason, edit,
      action, actor, key;
  long long delay = 0, limit = 0, offset = 0, after = 0, priority = 0, max_retries = 0;
  double rate = 0;
  desc.add_options()
      ("help,h", "show this help")
      ("url", po::value(&g.url), "dlqd's base URL (default $DLQ_URL, else http://127.0.0.1:8080)")
      ("token", po::value(&g.token), "access token (default $DLQ_TOKEN; prefer the variable: "
                                     "flags show in ps)")
      ("ca-file", po::value(&g.ca_file), "https: CA certificates (PEM) to verify the server with "
                                         "(default $DLQ_CA_FILE, else the system's)")
      ("json", "print the server's JSON answers (one line each) instead of tables")
      ("timeout", po::value(&g.timeout_s), "seconds to wait for each answer (default 30)")
      ("queue", po::value(&queue), "queue name")
      ("status", po::value(&status), "message status")
      ("dead", "the dead-letter view across queues")
      ("job-type", po::value(&job_type), "job type")
      ("error-class", po::value(&error_class), "error class")
      ("dead-reason", po::value(&dead_reason), "dead reason")
      ("since", po::value(&since), "dead (or audited) at or after this time")
      ("until", po::value(&until), "dead (or audited) at or before this time")
      ("before", po::value(&before), "purge: entered the status before this time (default now)")
      ("reason", po::value(&reason), "why (recorded in the history and audit log)")
      ("edit", po::value(&edit), "replay with the payload in FILE (- for stdin)")
      ("delay", po::value(&delay), "seconds before the message (or run) is due")
      ("rate", po::value(&rate), "batch replay: messages per second")
      ("keep-order", "batch replay in dead_at order")
      ("acknowledge-side-effects", "batch replay of job types configured as not idempotent")
      ("no-follow", "batch replay: start the run and return")
      ("force", "replay even if the idempotency key already succeeded, or the message was dismissed")
      ("dry-run", "show what would happen; change nothing")
      ("yes,y", "do not ask for confirmation")
      ("limit", po::value(&limit), "page size (1-100)")
      ("offset", po::value(&offset), "ls --queue: skip this many")
      ("after", po::value(&after), "keyset paging: the next_after_id of the previous page")
      ("action", po::value(&action), "audit action")
      ("actor", po::value(&actor), "audit actor (token name)")
      ("idempotency-key", po::value(&key), "enqueue: idempotency key")
      ("priority", po::value(&priority), "enqueue: priority 0-9")
      ("max-retries", po::value(&max_retries), "enqueue: maximum attempts")
      ("ready", "health: ask /readyz (database usable) instead of /healthz");
  po::options_description hidden;
  std::vector<std::string> words;
  hidden.add_options()("words", po::value(&words));
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description pos;
  pos.add("words", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    help = true;
    std::cout << desc << "\n";
    return {};
  }
  if (words.empty()) throw UsageError("no command given");
  Invocation inv;
  inv.command = words.front();
  inv.args.assign(words.begin() + 1, words.end());
  f.dead = vm.count("dead") > 0;
  CommandSpec spec = spec_for(inv.command, f.dead);
  static const std::set<std::string> global = {"help", "url", "token", "ca-file", "json", "timeout", "words"};
  for (const auto& [name, value] : vm) {
    if (!global.contains(name) && !spec.options.contains(name)) {
      throw UsageError("--" + name + " does not apply to " + inv.command + (f.dead ? " --dead" : ""));
    }
  }
  if (inv.args.size() < spec.min_args || inv.args.size() > spec.max_args) {
    throw UsageError("wrong number of arguments for " + inv.command);
  }
  auto opt = [&](const char* name, const std::string& v) {
    return vm.count(name) ? std::optional<std::string>(v) : std::nullopt;
  };
  auto num = [&](const char* name, long long v) {
    return vm.count(name) ? std::optional<long long>(v) : std::nullopt;
  };
  f.queue = opt("queue", queue);
  f.status = opt("status", status);
  f.job_type = opt("job-type", job_type);
  f.error_class = opt("error-class", error_class);
  f.dead_reason = opt("dead-reason", dead_reason);
  f.since = opt("since", since);
  f.until = opt("until", until);
  f.before = opt("before", before);
  f.reason = opt("reason", reason);
  f.edit = opt("edit", edit);
  f.action = opt("action", action);
  f.actor = opt("actor", actor);
  f.idempotency_key = opt("idempotency-key", key);
  f.delay = num("delay", delay);
  f.limit = num("limit", limit);
  f.offset = num("offset", offset);
  f.after = num("after", after);
  f.priority = num("priority", priority);
  f.max_retries = num("max-retries", max_retries);
  if (vm.count("rate")) f.rate = rate;
  f.dry_run = vm.count("dry-run") > 0;
  f.yes = vm.count("yes") > 0;
  f.force = vm.count("force") > 0;
  f.keep_order = vm.count("keep-order") > 0;
  f.acknowledge = vm.count("acknowledge-side-effects") > 0;
  f.no_follow = vm.count("no-follow") > 0;
  f.ready = vm.count("ready") > 0;
  g.json = vm.count("json") > 0;

  // In `ls --dead` the only reason there is to filter by is the dead reason.
  if (inv.command == "ls" && f.dead && f.reason) {
    if (f.dead_reason) throw UsageError("give --reason or --dead-reason, not both");
    f.dead_reason = f.reason;
    f.reason.reset();
  }
  if (inv.command == "ls" && !f.dead && !f.queue) throw UsageError("ls needs --queue Q or --dead");
  if (inv.command == "dismiss" && !f.reason) throw UsageError("dismiss needs --reason R (say why)");
  if (inv.command == "purge" && !f.status) throw UsageError("purge needs --status S");
  if (inv.command == "run" && inv.args.size() == 2 && inv.args[1] != "pause" &&
      inv.args[1] != "resume" && inv.args[1] != "cancel") {
    throw UsageError("run ID takes pause, resume or cancel, not " + inv.args[1]);
  }
  check_time(f.since, "since");
  check_time(f.until, "until");
  check_time(f.before, "before");
  if (!(g.timeout_s > 0 && g.timeout_s <= 3600)) throw UsageError("--timeout must be 0 to 3600 seconds");
  inv.flags = std::move(f);
  return inv;
}

std::string env_or(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Global g;
    bool help = false;
    Invocation inv = parse(argc, argv, g, help);
    if (help) return kExitOk;
    if (inv.command == "hash-token") return dlq::hash_token_command(std::cin, std::cout, std::cerr, "dlqctl");
    if (g.url.empty()) g.url = env_or("DLQ_URL", "http://127.0.0.1:8080");
    if (g.token.empty()) g.token = env_or("DLQ_TOKEN", "");
    if (g.ca_file.empty()) g.ca_file = env_or("DLQ_CA_FILE", "");
    Client client(ServerUrl::parse(g.url), g.token,
                  std::chrono::milliseconds(static_cast<long long>(g.timeout_s * 1000)), g.ca_file);
    Session session{client, g.json, isatty(STDOUT_FILENO) == 1, std::cin, std::cout, std::cerr};
    const bool acts = inv.command == "replay" || inv.command == "dismiss" || inv.command == "purge" ||
                      inv.command == "enqueue" || (inv.command == "run" && inv.args.size() == 2);
    return acts ? run_action_command(session, inv) : run_view_command(session, inv);
  } catch (const po::error& e) {
    std::cerr << "dlqctl: " << e.what() << " (see dlqctl --help)\n";
    return kExitUsage;
  } catch (const UsageError& e) {
    std::cerr << "dlqctl: " << e.what() << " (see dlqctl --help)\n";
    return kExitUsage;
  } catch (const ServerRefused& e) {
    std::cerr << "dlqctl: the server refused: " << e.what() << "\n";
    return kExitRefused;
  } catch (const ServerFailed& e) {
    std::cerr << "dlqctl: the server failed: " << e.what() << "\n";
    return kExitUnreachable;
  } catch (const Unreachable& e) {
    std::cerr << "dlqctl: " << e.what() << "\n";
    return kExitUnreachable;
  } catch (const std::exception& e) {
    std::cerr << "dlqctl: unexpected answer: " << e.what() << "\n";
    return kExitUnreachable;
  }
}
