// The flag table, the commands' specs and the parse. A flag's row says where its value goes;
// whether it takes a value, and of which type, follows from that.
#include "command_line.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <variant>
#include <vector>

#include <boost/program_options.hpp>

#include "command_help.hpp"
#include "model/time.hpp"

namespace po = boost::program_options;

namespace dlq::ctl {
namespace {

constexpr const char* kUsage = R"(dlqctl: operate a dlqd server over its HTTP API
Usage: dlqctl [--url URL] [--token TOKEN] [--ca-file PEM] [--json] COMMAND [ARGS] [FLAGS]
       dlqctl help COMMAND (or COMMAND --help): one command's flags and an example

Commands:
  queues                                 every queue with its counts, by name (--limit, --after)
  stats Q                                one queue's counts
  ls --queue Q [--status S|--retrying]   a queue's messages with their total (--job-type,
         [--order desc]                  --error-class, --limit, --offset)
  ls --dead [FILTER]                     dead messages across queues (--limit, --after)
  show Q ID                              one message
  attempts Q ID [--full]                 a message's attempt history with causes and stacks
  replay Q ID [--reason R] [--edit FILE|- [--not-json]] [--delay S] [--force]
         [--resolve-effect KEY=done|forget ...] [--dry-run]
  replay --dead [FILTER] [--rate N] [--delay S] [--reason R] [--keep-order]
         [--acknowledge-side-effects] [--no-follow] [--dry-run] [--yes]
                                         preview, ask, start a run and follow it
  runs                                   replay runs, newest first (--limit, --after)
  run ID [--follow | pause|resume|cancel] show, follow or change a replay run
  trial Q ID [--edit FILE|-] [--reason R] [--wait]
                                         hand a dead message once to a worker that takes trials
  dismiss Q ID --reason R                a dead message: won't fix
  dismiss --dead [FILTER] --reason R [--dry-run] [--yes]
  incidents [--queue Q] [--job-type T] [--error-class C] [--since T] [--until T]
         [--sort dead|last_dead_at] [--limit N] [--cursor C]
                                         the causes of dead letters, most dead first
  incident FP                            one incident
  mute FP --until T [--reason R]         no incident alerts for it until T (--until now un-mutes)
  purge Q --status succeeded|dead|dismissed [--before T] [--yes]
  audit [--action A] [--actor N] [--queue Q] [--since T] [--until T]
  enqueue Q PAYLOAD|- [--job-type T] [--idempotency-key K] [--delay S]
         [--priority P] [--max-retries N]
  whoami                                 who the token is and what its roles allow
  health [--ready]                       GET /healthz (or /readyz); for health checks
  hash-token                             SHA-256 of the token on stdin (as dlqd hash-token)

FILTER: --queue Q --job-type T --error-class C --dead-reason R --since T --until T
        --incident FP (in `ls --dead`, --reason R also filters by dead reason);
        ls, replay and dismiss with --incident FP imply --dead
Times: RFC 3339 (2026-06-01T00:00:00Z), "YYYY-MM-DD HH:MM:SS" (UTC), or an age: 45s, 30m,
       2h, 1d ago (mute --until: from now).
Environment: DLQ_URL (default http://127.0.0.1:8080; https:// for a TLS proxy in front of
             dlqd), DLQ_TOKEN, DLQ_CA_FILE, COLUMNS (table width when not a terminal).
Exit status: 0 ok; 1 the server refused (the problem is printed) or you answered no;
             2 bad usage; 3 the server could not be reached, timed out, failed (5xx) or
             answered with something that is not dlq's JSON; 130 Ctrl-C while following.

Options)";

// Where a flag's value goes: a member of Global (every command takes these) or of Flags (the
// commands' own), or nowhere (--help). A bool member is a switch; any other takes a value.
using Target = std::variant<std::monostate, std::string Global::*, double Global::*,
                            bool Global::*, std::optional<std::string> Flags::*,
                            std::optional<long long> Flags::*, std::optional<double> Flags::*,
                            std::optional<std::vector<std::string>> Flags::*, bool Flags::*>;

struct FlagRow {
  const char* name;  // as program_options takes it ("yes,y": also -y)
  Target target;
  const char* help;
};

// Every flag, in the order --help lists them.
const FlagRow kFlags[] = {
    {"help,h", std::monostate{}, "show this help"},
    {"url", &Global::url, "dlqd's base URL (default $DLQ_URL, else http://127.0.0.1:8080)"},
    {"token", &Global::token,
     "access token (default $DLQ_TOKEN; prefer the variable: flags show in ps)"},
    {"ca-file", &Global::ca_file,
     "https: CA certificates (PEM) to verify the server with (default $DLQ_CA_FILE, else the "
     "system's)"},
    {"json", &Global::json, "print the server's JSON answers (one line each) instead of tables"},
    {"timeout", &Global::timeout_s, "seconds to wait for each answer (default 30)"},
    {"queue", &Flags::queue, "queue name"},
    {"status", &Flags::status, "message status"},
    {"dead", &Flags::dead, "the dead-letter view across queues"},
    {"job-type", &Flags::job_type, "job type"},
    {"error-class", &Flags::error_class, "error class"},
    {"dead-reason", &Flags::dead_reason, "dead reason"},
    {"since", &Flags::since, "dead (or audited) at or after this time"},
    {"until", &Flags::until, "dead (or audited) at or before this time"},
    {"before", &Flags::before, "purge: entered the status before this time (default now)"},
    {"reason", &Flags::reason, "why (recorded in the history and audit log)"},
    {"edit", &Flags::edit, "replay with the payload in FILE (- for stdin)"},
    {"not-json", &Flags::not_json, "replay --edit: the payload is text, not JSON"},
    {"delay", &Flags::delay, "seconds before the message (or run) is due"},
    {"rate", &Flags::rate, "batch replay: messages per second"},
    {"keep-order", &Flags::keep_order, "batch replay in dead_at order"},
    {"acknowledge-side-effects", &Flags::acknowledge,
     "batch replay of job types configured as not idempotent"},
    {"no-follow", &Flags::no_follow, "batch replay: start the run and return"},
    {"follow", &Flags::follow, "run ID: follow the run until it is done (Ctrl-C stops following)"},
    {"force", &Flags::force,
     "replay even if the idempotency key already succeeded, or the message was dismissed"},
    {"resolve-effect", &Flags::resolve_effects,
     "replay Q ID: KEY=done (the started side effect happened: the worker skips it) or "
     "KEY=forget (it did not: the worker runs it again); once per key"},
    {"dry-run", &Flags::dry_run, "show what would happen; change nothing"},
    {"wait", &Flags::wait, "trial: wait for its outcome (exit 0 succeeded, 1 failed or expired)"},
    {"yes,y", &Flags::yes, "do not ask for confirmation"},
    {"limit", &Flags::limit, "page size (1-100; attempts and queues: 1-1000)"},
    {"offset", &Flags::offset, "ls --queue: skip this many"},
    {"order", &Flags::order, "ls --queue: asc (oldest first, the default) or desc (newest first)"},
    {"retrying", &Flags::retrying,
     "ls --queue: pending messages that failed or lost their lease at least once"},
    {"full", &Flags::full, "attempts: every stack line (default: the first 5)"},
    {"after", &Flags::after,
     "paging: the next_after_id of the previous page (attempts, queues: its next_after)"},
    {"action", &Flags::action, "audit action"},
    {"actor", &Flags::actor, "audit actor (token name)"},
    {"idempotency-key", &Flags::idempotency_key, "enqueue: idempotency key"},
    {"priority", &Flags::priority, "enqueue: priority 0-9"},
    {"max-retries", &Flags::max_retries, "enqueue: maximum attempts"},
    {"ready", &Flags::ready, "health: ask /readyz (database usable) instead of /healthz"},
    {"incident", &Flags::incident, "one incident's dead messages (its fingerprint)"},
    {"sort", &Flags::sort, "incidents: dead (most first) or last_dead_at (newest first)"},
    {"cursor", &Flags::cursor, "incidents: the next_cursor of the previous page"},
};

// The struct a member belongs to and the value it holds (without its optional).
template <class M>
struct Member;
template <class C, class V>
struct Member<V C::*> {
  using owner = C;
  using value = V;
};
template <class C, class V>
struct Member<std::optional<V> C::*> {
  using owner = C;
  using value = V;
};

// The flag's name as the variables map knows it: the long name.
std::string key_of(const FlagRow& row) {
  std::string name = row.name;
  return name.substr(0, name.find(','));
}

bool is_global(const FlagRow& row) {
  return std::visit(
      [](auto member) {
        using M = decltype(member);
        if constexpr (std::is_same_v<M, std::monostate>) {
          return true;
        } else {
          return std::is_same_v<typename Member<M>::owner, Global>;
        }
      },
      row.target);
}

// The rows of kFlags that `wanted` names (all of them by default), described under `caption`.
po::options_description visible_options(const std::string& caption = kUsage,
                                        const std::set<std::string>* wanted = nullptr) {
  po::options_description desc(caption);
  auto add = desc.add_options();
  for (const auto& row : kFlags) {
    if (wanted && !wanted->contains(key_of(row))) continue;
    std::visit(
        [&](auto member) {
          using M = decltype(member);
          if constexpr (std::is_same_v<M, std::monostate>) {
            add(row.name, row.help);
          } else if constexpr (std::is_same_v<typename Member<M>::value, bool>) {
            add(row.name, row.help);
          } else {
            add(row.name, po::value<typename Member<M>::value>(), row.help);
          }
        },
        row.target);
  }
  return desc;
}

// Copies every flag given from the variables map to where its row says.
void store_flags(const po::variables_map& vm, Global& g, Flags& f) {
  for (const auto& row : kFlags) {
    const std::string key = key_of(row);
    std::visit(
        [&](auto member) {
          using M = decltype(member);
          if constexpr (!std::is_same_v<M, std::monostate>) {
            using Owner = typename Member<M>::owner;
            using Value = typename Member<M>::value;
            Owner& owner = [&]() -> Owner& {
              if constexpr (std::is_same_v<Owner, Global>) {
                return g;
              } else {
                return f;
              }
            }();
            if constexpr (std::is_same_v<Value, bool>) {
              owner.*member = vm.count(key) > 0;
            } else if (vm.count(key)) {
              owner.*member = vm[key].as<Value>();
            }
          }
        },
        row.target);
  }
}

struct CommandSpec {
  std::size_t min_args, max_args;
  std::set<std::string> options;  // besides the global ones
};

const std::set<std::string> kFilter = {"queue", "job-type", "error-class", "dead-reason",
                                       "since", "until", "incident"};

std::set<std::string> with_filter(std::set<std::string> extra) {
  extra.insert(kFilter.begin(), kFilter.end());
  return extra;
}

// Every flag a spec names is a row of kFlags: a misspelt one would refuse its flag for ever.
std::map<std::string, CommandSpec> checked(std::map<std::string, CommandSpec> specs) {
  std::set<std::string> known;
  for (const auto& row : kFlags) known.insert(key_of(row));
  for (const auto& [command, spec] : specs) {
    for (const auto& name : spec.options) {
      if (!known.contains(name)) throw std::logic_error(command + " names no flag --" + name);
    }
  }
  return specs;
}

// Which flags each command (and form) accepts; anything else is bad usage.
const CommandSpec& spec_for(const std::string& command, bool dead) {
  static const std::map<std::string, CommandSpec> plain = checked({
      {"queues", {0, 0, {"limit", "after"}}},
      {"stats", {1, 1, {}}},
      {"ls", {0, 0, {"queue", "status", "retrying", "order", "job-type", "error-class", "limit",
                     "offset"}}},
      {"show", {2, 2, {}}},
      {"attempts", {2, 2, {"limit", "after", "full"}}},
      {"replay", {2, 2, {"reason", "edit", "not-json", "delay", "force", "resolve-effect",
                         "dry-run"}}},
      {"runs", {0, 0, {"limit", "after"}}},
      {"run", {1, 2, {"follow"}}},
      {"dismiss", {2, 2, {"reason"}}},
      {"purge", {1, 1, {"status", "before", "yes"}}},
      {"audit", {0, 0, {"action", "actor", "queue", "since", "until", "limit", "after"}}},
      {"enqueue", {2, 2, {"job-type", "idempotency-key", "delay", "priority", "max-retries"}}},
      {"health", {0, 0, {"ready"}}},
      {"whoami", {0, 0, {}}},
      {"trial", {2, 2, {"edit", "not-json", "reason", "wait"}}},
      {"hash-token", {0, 0, {}}},
      {"incidents", {0, 0, {"queue", "job-type", "error-class", "since", "until", "sort", "limit",
                            "cursor"}}},
      {"incident", {1, 1, {}}},
      {"mute", {1, 1, {"until", "reason"}}},
  });
  static const std::map<std::string, CommandSpec> dead_forms = checked({
      {"ls", {0, 0, with_filter({"dead", "reason", "limit", "after"})}},
      {"replay", {0, 0, with_filter({"dead", "rate", "delay", "reason", "keep-order",
                                     "acknowledge-side-effects", "no-follow", "dry-run", "yes"})}},
      {"dismiss", {0, 0, with_filter({"dead", "reason", "dry-run", "yes"})}},
  });
  if (dead) {
    auto it = dead_forms.find(command);
    if (it == dead_forms.end()) throw UsageError("--dead does not apply to " + command);
    return it->second;
  }
  auto it = plain.find(command);
  if (it == plain.end()) throw UsageError("unknown command: " + command);
  return it->second;
}

// Each flag given must be a global one or one the command's spec names.
void check_applies(const po::variables_map& vm, const Invocation& inv, const CommandSpec& spec) {
  std::set<std::string> global = {"words"};
  for (const auto& row : kFlags) {
    if (is_global(row)) global.insert(key_of(row));
  }
  for (const auto& [name, value] : vm) {
    if (!global.contains(name) && !spec.options.contains(name)) {
      throw UsageError("--" + name + " does not apply to " + inv.command +
                       (inv.flags.dead ? " --dead" : ""));
    }
  }
}

// An age ("45s", "30m", "2h", "1d") in milliseconds; none for any other text.
std::optional<dlq::TimeMs> age_ms(const std::string& text) {
  if (text.size() < 2 || text.size() > 10) return std::nullopt;
  const std::string digits = text.substr(0, text.size() - 1);
  if (!std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return std::nullopt;
  }
  static const std::map<char, dlq::TimeMs> unit = {
      {'s', 1000}, {'m', 60'000}, {'h', 3'600'000}, {'d', 86'400'000}};
  auto it = unit.find(text.back());
  if (it == unit.end()) return std::nullopt;
  return std::stoll(digits) * it->second;
}

// Checks a time flag locally (a typo is exit 2 before anything is sent) and turns an age into
// the RFC 3339 time it names: that long ago, or from now for `ahead` (mute --until 2h).
void resolve_time(std::optional<std::string>& t, const char* flag, bool ahead = false) {
  if (!t) return;
  if (auto age = age_ms(*t)) {
    dlq::TimeMs now = dlq::SystemClock().now();
    *t = dlq::format_rfc3339(ahead ? now + *age : now - *age);
    return;
  }
  if (!dlq::parse_timestamp(*t)) {
    throw UsageError(std::string("--") + flag + ": not a time: " + *t +
                     " (use RFC 3339, \"YYYY-MM-DD HH:MM:SS\" or an age: 45s, 30m, 2h, 1d)");
  }
}

// Message and run ids are positive integers: anything else is bad usage, not a 404.
void check_id(const std::string& id, const char* what) {
  bool digits = !id.empty() && id.size() <= 18 &&
                std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isdigit(c); });
  if (!digits || std::stoll(id) == 0) {
    throw UsageError(std::string(what) + " must be a positive whole number, not \"" + id + "\"");
  }
}

// What no spec can say: flags that depend on each other or on the arguments.
void check_combinations(const Global& g, Invocation& inv) {
  Flags& f = inv.flags;
  // In `ls --dead` the only reason there is to filter by is the dead reason.
  if (inv.command == "ls" && f.dead && f.reason) {
    if (f.dead_reason) throw UsageError("give --reason or --dead-reason, not both");
    f.dead_reason = f.reason;
    f.reason.reset();
  }
  if (inv.command == "ls" && !f.dead && !f.queue) throw UsageError("ls needs --queue Q or --dead");
  if (inv.command == "dismiss" && !f.reason) throw UsageError("dismiss needs --reason R (say why)");
  if (inv.command == "purge" && !f.status) throw UsageError("purge needs --status S");
  if (inv.command == "mute" && !f.until) {
    throw UsageError("mute needs --until T (--until now un-mutes)");
  }
  if (inv.command == "incidents" && f.sort && *f.sort != "dead" && *f.sort != "last_dead_at") {
    throw UsageError("--sort takes dead or last_dead_at, not " + *f.sort);
  }
  if (inv.command == "run" && inv.args.size() == 2 && inv.args[1] != "pause" &&
      inv.args[1] != "resume" && inv.args[1] != "cancel") {
    throw UsageError("run ID takes pause, resume or cancel, not " + inv.args[1]);
  }
  if (inv.command == "ls" && f.retrying && f.status) {
    throw UsageError("give --status or --retrying, not both (retrying messages are pending)");
  }
  if (inv.command == "ls" && f.order && *f.order != "desc" && *f.order != "asc") {
    throw UsageError("--order takes desc or asc, not " + *f.order);
  }
  if (f.not_json && !f.edit) throw UsageError("--not-json goes with --edit FILE");
  if (f.resolve_effects) {
    for (const auto& item : *f.resolve_effects) {
      auto eq = item.rfind('=');
      std::string how = eq == std::string::npos ? "" : item.substr(eq + 1);
      if (eq == 0 || (how != "done" && how != "forget")) {
        throw UsageError("--resolve-effect takes KEY=done or KEY=forget, not \"" + item + "\"");
      }
    }
  }
  if (inv.command == "run" && f.follow && inv.args.size() == 2) {
    throw UsageError("--follow goes with run ID alone, not with " + inv.args[1]);
  }
  const std::set<std::string> on_message = {"show", "attempts", "replay", "dismiss", "trial"};
  if (on_message.contains(inv.command) && inv.args.size() == 2) check_id(inv.args[1], "the message id");
  if (inv.command == "run") check_id(inv.args.at(0), "the run id");
  resolve_time(f.since, "since");
  if (!(inv.command == "mute" && f.until == "now")) resolve_time(f.until, "until", inv.command == "mute");
  resolve_time(f.before, "before");
  if (!(g.timeout_s > 0 && g.timeout_s <= 3600)) {
    throw UsageError("--timeout takes seconds: more than 0 and at most 3600");
  }
}

}  // namespace

std::string usage(const std::string& command) {
  std::ostringstream out;
  if (command.empty()) {
    out << visible_options();
    return out.str();
  }
  const CommandHelp* page = command_help(command);
  if (!page) throw UsageError("no such command: " + command);
  std::set<std::string> flags = spec_for(command, false).options;
  if (command == "ls" || command == "replay" || command == "dismiss") {
    const auto& dead = spec_for(command, true).options;
    flags.insert(dead.begin(), dead.end());
  }
  std::string synopsis = page->synopsis;
  for (std::size_t at = 0; (at = synopsis.find('\n', at)) != std::string::npos; at += 1) {
    // A second form gets its own "dlqctl"; a continuation lines up under the first's words.
    synopsis.insert(at + 1, synopsis.compare(at + 1, 7, "       ") == 0 ? "       " : "       dlqctl ");
  }
  out << "Usage: dlqctl " << synopsis << "\n\n" << page->what << "\n\n";
  if (!flags.empty()) out << visible_options("Flags", &flags) << "\n";
  out << "Global flags: --url, --token, --ca-file, --json, --timeout (see dlqctl --help)\n\n"
      << "Example:\n  " << page->example;
  return out.str();
}

CommandLine parse_command_line(int argc, char** argv) {
  po::options_description all = visible_options();
  std::vector<std::string> words;
  po::options_description hidden;
  hidden.add_options()("words", po::value(&words));
  all.add(hidden);
  po::positional_options_description pos;
  pos.add("words", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
  po::notify(vm);

  CommandLine cl;
  if (vm.count("help") || (!words.empty() && words.front() == "help")) {
    cl.help = true;
    std::size_t at = !words.empty() && words.front() == "help" ? 1 : 0;
    if (words.size() > at) cl.help_command = words[at];
    return cl;
  }
  if (words.empty()) throw UsageError("no command given");
  Invocation& inv = cl.invocation;
  inv.command = words.front();
  inv.args.assign(words.begin() + 1, words.end());
  store_flags(vm, cl.global, inv.flags);
  // One incident's dead messages are a dead-letter filter: --incident implies --dead.
  if (inv.flags.incident && (inv.command == "ls" || inv.command == "replay" || inv.command == "dismiss")) {
    inv.flags.dead = true;
  }
  const CommandSpec& spec = spec_for(inv.command, inv.flags.dead);
  check_applies(vm, inv, spec);
  if (inv.args.size() < spec.min_args || inv.args.size() > spec.max_args) {
    throw UsageError("wrong number of arguments for " + inv.command);
  }
  check_combinations(cl.global, inv);
  return cl;
}

}  // namespace dlq::ctl
