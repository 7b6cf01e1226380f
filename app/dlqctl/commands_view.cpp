// dlqctl's read-only commands: queues, stats, ls, show, attempts, runs, run ID, audit, health.
// Each asks one question and prints the answer as a table (or the JSON with --json).
#include <iostream>

#include <boost/json.hpp>

#include "output.hpp"
#include "session.hpp"

namespace dlq::ctl {
namespace json = boost::json;

namespace {

// 75 -> "1m15s"; null -> "-".
std::string age(const json::value& o, std::string_view key) {
  const json::value* v = o.as_object().if_contains(key);
  if (!v || !v->is_number()) return "-";
  auto s = v->to_number<long long>();
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
  if (s < 86400) return std::to_string(s / 3600) + "h" + std::to_string(s % 3600 / 60) + "m";
  return std::to_string(s / 86400) + "d" + std::to_string(s % 86400 / 3600) + "h";
}

const json::array& items(const json::value& answer, std::string_view key) {
  return answer.as_object().at(key).as_array();
}

// The "more: …" hint of a page, on stderr so that stdout stays the table: `key` is the member
// that says where the next page starts (next_after_id, or the attempts' next_after).
void next_page_hint(Session& s, const json::value& answer, std::string_view key = "next_after_id") {
  const json::value* next = answer.as_object().if_contains(key);
  if (next && next->is_number()) s.err << "(more: --after " << json::serialize(*next) << ")\n";
}

int queues(Session& s, const Flags& f) {
  json::value answer =
      s.call("GET", "/queues" + Query().add("limit", f.limit).add("after", f.after).str());
  if (s.json) return s.print_json(answer), kExitOk;
  Table t({"QUEUE", "READY", "SCHEDULED", "PROCESSING", "SUCCEEDED", "DEAD", "DISMISSED",
           "OLDEST READY", "OLDEST DEAD"});
  for (const auto& q : items(answer, "queues")) {
    t.row({cell(q, "queue"), cell(q, "ready"), cell(q, "scheduled"), cell(q, "processing"),
           cell(q, "succeeded"), cell(q, "dead"), cell(q, "dismissed"),
           age(q, "oldest_ready_age_seconds"), age(q, "oldest_dead_age_seconds")});
  }
  if (t.empty()) s.out << "no queues yet\n";
  else t.print(s.out, s.columns);
  const json::value* next = answer.as_object().if_contains("next_after");
  if (next && next->is_string()) {
    s.err << "(more: --after " << std::string_view(next->get_string()) << ")\n";
  }
  return kExitOk;
}

int stats(Session& s, const std::string& queue) {
  json::value answer = s.call("GET", queue_path(queue) + "/stats");
  if (s.json) return s.print_json(answer), kExitOk;
  print_fields(s.out, answer.as_object());
  return kExitOk;
}

// What the queue's stats count for the list asked for: "12 dead", "3 pending", "40 messages".
std::string total_line(const json::value& stats, const Flags& f) {
  auto n = [&](const char* key) {
    const json::value* v = stats.as_object().if_contains(key);
    return v && v->is_number() ? v->to_number<long long>() : 0;
  };
  std::string what = f.retrying ? "pending" : f.status.value_or("");
  long long total = 0;
  if (what == "pending") {
    total = n("ready") + n("scheduled");
  } else if (!what.empty()) {
    total = n(what.c_str());
  } else {
    for (const char* k : kStatsCounts) total += n(k);
    what = total == 1 ? "message" : "messages";
  }
  std::vector<std::string> filters;
  if (f.retrying) filters.push_back("retrying only");
  if (f.job_type) filters.push_back("job type = " + shown(*f.job_type));
  if (f.error_class) filters.push_back("error class = " + shown(*f.error_class));
  std::string line = std::to_string(total) + " " + what + " in queue " + shown(*f.queue);
  if (!filters.empty()) {
    line += " (this list is filtered: ";
    for (std::size_t i = 0; i < filters.size(); ++i) line += (i ? ", " : "") + filters[i];
    line += ")";
  }
  return line;
}

int list_queue(Session& s, const Flags& f) {
  std::string target = queue_path(*f.queue) + "/messages" +
                       Query()
                           .add("status", f.status)
                           .add("retrying", f.retrying ? std::optional<std::string>("true") : std::nullopt)
                           .add("job_type", f.job_type)
                           .add("error_class", f.error_class)
                           .add("order", f.order)
                           .add("limit", f.limit)
                           .add("offset", f.offset)
                           .str();
  json::value answer = s.call("GET", target);
  if (s.json) return s.print_json(answer), kExitOk;
  json::value stats = s.call("GET", queue_path(*f.queue) + "/stats");
  Table t({"ID", "STATUS", "JOB TYPE", "TRIES", "UPDATED", "LAST ERROR"});
  for (const auto& m : items(answer, "messages")) {
    t.row({cell(m, "id"), cell(m, "status"), cell(m, "job_type"),
           cell(m, "retry_count") + "/" + cell(m, "max_retries"), cell(m, "updated_at"),
           shorten(cell(m, "last_error"), 60)});
  }
  if (t.empty() && never_used(stats)) {
    s.err << unused_queue_sentence(*f.queue) << "\n";
    s.out << "no messages\n";
    return kExitOk;
  }
  if (t.empty()) s.out << "no messages\n";
  else t.print(s.out, s.columns);
  s.out << total_line(stats, f) << "\n";
  long long limit = f.limit.value_or(20);
  if (static_cast<long long>(items(answer, "messages").size()) == limit) {
    s.err << "(more: --offset " << f.offset.value_or(0) + limit << ")\n";
  }
  return kExitOk;
}

int list_dead(Session& s, const Flags& f) {
  std::string target = "/dlq" + Query()
                                    .add("queue", f.queue)
                                    .add("job_type", f.job_type)
                                    .add("error_class", f.error_class)
                                    .add("dead_reason", f.dead_reason)
                                    .add("since", f.since)
                                    .add("until", f.until)
                                    .add("fingerprint", f.incident)
                                    .add("limit", f.limit)
                                    .add("after_id", f.after)
                                    .str();
  json::value answer = s.call("GET", target);
  if (s.json) return s.print_json(answer), kExitOk;
  Table t({"ID", "QUEUE", "JOB TYPE", "ERROR CLASS", "DEAD REASON", "DEAD AT", "LAST ERROR"});
  for (const auto& m : items(answer, "messages")) {
    t.row({cell(m, "id"), cell(m, "queue"), cell(m, "job_type"), cell(m, "error_class"),
           cell(m, "dead_reason"), cell(m, "dead_at"), shorten(cell(m, "last_error"), 60)});
  }
  if (t.empty()) {
    s.out << "no dead messages match\n";
    if (f.queue) name_if_unused(s, *f.queue);
  } else {
    t.print(s.out, s.columns);
  }
  next_page_hint(s, answer);
  return kExitOk;
}

int show(Session& s, const std::string& queue, const std::string& id) {
  json::value answer = on_message(s, queue, [&] { return s.call("GET", message_path(queue, id)); });
  if (s.json) return s.print_json(answer), kExitOk;
  print_fields(s.out, answer.as_object());
  return kExitOk;
}

// The failure's own words below the table, which cuts them: the whole error, its cause, and
// the first 5 stack lines (all with --full).
void print_failure_details(Session& s, const json::array& attempts, bool full) {
  constexpr std::size_t kStackLines = 5;
  for (const auto& a : attempts) {
    const bool has_cause = cell(a, "cause") != "-", has_stack = cell(a, "stack") != "-";
    if (!has_cause && !has_stack) continue;
    s.out << "\nattempt " << cell(a, "attempt") << " (" << cell(a, "outcome");
    if (cell(a, "error_class") != "-") s.out << ", " << cell(a, "error_class");
    s.out << "): " << cell(a, "error") << "\n";
    if (has_cause) s.out << "  cause: " << cell(a, "cause") << "\n";
    if (!has_stack) continue;
    std::vector<std::string> lines;
    std::string_view stack = a.at("stack").get_string();
    for (std::size_t at = 0; at <= stack.size();) {
      std::size_t end = std::min(stack.find('\n', at), stack.size());
      std::string_view line = stack.substr(at, end - at);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      lines.push_back(shown(line));
      at = end + 1;
    }
    while (!lines.empty() && lines.back().empty()) lines.pop_back();
    s.out << "  stack:\n";
    std::size_t shown_lines = full ? lines.size() : std::min(lines.size(), kStackLines);
    for (std::size_t i = 0; i < shown_lines; ++i) s.out << "    " << lines[i] << "\n";
    if (shown_lines < lines.size()) {
      s.out << "    (" << lines.size() - shown_lines << " more line(s): --full shows them)\n";
    }
  }
}

// The recorded side effects below the history: a started one of a message no longer being
// processed may have happened, and only an operator can say (replay --resolve-effect).
void print_effects(Session& s, const json::value& answer) {
  const json::value* effects = answer.as_object().if_contains("effects");
  if (!effects || !effects->is_array() || effects->get_array().empty()) return;
  s.out << "\nside effects:\n";
  Table t({"KEY", "STATE", "ATTEMPT", "RECORDED", "DESCRIPTION", "RESULT"});
  bool uncertain = false;
  for (const auto& e : effects->get_array()) {
    std::string state = cell(e, "state");
    if (state == "started") {
      state = "started (uncertain)";
      uncertain = true;
    } else if (cell(e, "resolved_by") != "-") {
      state = "done by " + cell(e, "resolved_by");
    }
    t.row({cell(e, "key"), state, cell(e, "attempt"), cell(e, "recorded_at"),
           shorten(cell(e, "description"), 40), shorten(cell(e, "result"), 40)});
  }
  t.print(s.out, s.columns);
  if (uncertain) {
    s.out << "a started effect may or may not have happened: check it, then replay with "
             "--resolve-effect KEY=done (it happened) or KEY=forget (run it again)\n";
  }
}

// One page with --limit or --after (and the hint to the next); otherwise every page, followed
// through next_after to the end.
int attempts(Session& s, const std::string& queue, const std::string& id, const Flags& f) {
  const bool one_page = f.limit || f.after;
  const std::string path = message_path(queue, id, "attempts");
  json::value answer = on_message(s, queue, [&] {
    return s.call("GET", path + Query().add("limit", one_page ? f.limit : 1000).add("after", f.after).str());
  });
  if (!one_page) {
    json::array& all = answer.as_object().at("attempts").as_array();
    for (json::value next = answer.at("next_after"); next.is_number();) {
      json::value page = s.call("GET", path + Query().add("limit", 1000LL)
                                                  .add("after", next.to_number<long long>())
                                                  .str());
      for (auto& a : page.as_object().at("attempts").as_array()) all.push_back(std::move(a));
      next = page.at("next_after");
    }
    answer.as_object()["count"] = all.size();
    answer.as_object()["next_after"] = nullptr;
  }
  if (s.json) return s.print_json(answer), kExitOk;
  Table t({"#", "OUTCOME", "CLAIMED", "FINISHED", "WORKER/ACTOR", "ERROR CLASS", "ERROR/REASON"});
  for (const auto& a : items(answer, "attempts")) {
    std::string who = cell(a, "worker") != "-" ? cell(a, "worker") : cell(a, "actor");
    if (cell(a, "worker_version") != "-") who += " " + cell(a, "worker_version");  // "w1 1.2.0"
    std::string why = cell(a, "error") != "-" ? cell(a, "error") : cell(a, "reason");
    std::string outcome = cell(a, "outcome") == "-" ? "(under way)" : cell(a, "outcome");
    // A folded run of releases: "released x500".
    // A trial run's entry: "trial succeeded".
    if (const json::value* trial = a.as_object().if_contains("trial"); trial && trial->is_object()) {
      outcome += " " + cell(*trial, "status");
    }
    const json::value* count = a.as_object().if_contains("count");
    if (count && count->is_int64() && count->get_int64() > 1) {
      outcome += " x" + std::to_string(count->get_int64());
    }
    t.row({cell(a, "attempt"), outcome, cell(a, "claimed_at"), cell(a, "finished_at"), who,
           cell(a, "error_class"), shorten(why, 60)});
  }
  if (t.empty()) s.out << (f.after.value_or("0") != "0" ? "no more attempts\n" : "no attempts yet\n");
  else t.print(s.out, s.columns);
  print_failure_details(s, items(answer, "attempts"), f.full);
  print_effects(s, answer);
  next_page_hint(s, answer, "next_after");
  return kExitOk;
}

int runs(Session& s, const Flags& f) {
  json::value answer =
      s.call("GET", "/dlq/replays" + Query().add("limit", f.limit).add("after_id", f.after).str());
  if (s.json) return s.print_json(answer), kExitOk;
  // REPLAYED is "replayed/matched"; who started a run is in `dlqctl run ID` and the audit log.
  Table t({"ID", "STATUS", "REPLAYED", "SKIPPED", "SUCCEEDED", "DEAD AGAIN", "PENDING", "RATE/S",
           "CREATED", "REASON"});
  for (const auto& r : items(answer, "replays")) {
    t.row({cell(r, "replay_id"), cell(r, "status"), cell(r, "replayed") + "/" + cell(r, "matched"),
           cell(r, "skipped"), cell(r, "succeeded"), cell(r, "dead_again"), cell(r, "pending"),
           cell(r, "rate_per_second"), cell(r, "created_at"), shorten(cell(r, "reason"), 40)});
  }
  if (t.empty()) s.out << "no replay runs\n";
  else t.print(s.out, s.columns);
  next_page_hint(s, answer);
  return kExitOk;
}

int run(Session& s, const std::string& id) {
  json::value answer = s.call("GET", "/dlq/replays/" + url_encode(id));
  if (s.json) return s.print_json(answer), kExitOk;
  print_fields(s.out, answer.as_object());
  return kExitOk;
}

// "oncall-lead (admin)"; without tokens the server lets everyone in, and says so.
int whoami(Session& s) {
  json::value answer;
  try {
    answer = s.call("GET", "/whoami");
  } catch (const ServerRefused& e) {
    if (e.status != 401) throw;
    throw ServerRefused(std::string(e.what()) +
                            "\n  token not accepted: check DLQ_TOKEN (or --token) and the server's auth.tokens",
                        e.status, e.body);
  }
  if (s.json) return s.print_json(answer), kExitOk;
  std::string roles;
  for (const auto& r : answer.at("roles").as_array()) {
    roles += (roles.empty() ? "" : ", ") + shown(r.as_string());
  }
  s.out << cell(answer, "actor") << " (" << roles << ")";
  if (!answer.at("tokens_configured").as_bool()) s.out << ": the server has no tokens, every request is let in";
  s.out << "\n";
  return kExitOk;
}

int audit(Session& s, const Flags& f) {
  std::string target = "/audit" + Query()
                                      .add("action", f.action)
                                      .add("actor", f.actor)
                                      .add("queue", f.queue)
                                      .add("since", f.since)
                                      .add("until", f.until)
                                      .add("limit", f.limit)
                                      .add("after_id", f.after)
                                      .str();
  json::value answer = s.call("GET", target);
  if (s.json) return s.print_json(answer), kExitOk;
  Table t({"ID", "AT", "ACTOR", "ACTION", "QUEUE", "MESSAGES", "REASON"});
  for (const auto& e : items(answer, "entries")) {
    std::string ids = cell(e, "message_ids");
    t.row({cell(e, "id"), cell(e, "at"), cell(e, "actor"), cell(e, "action"), cell(e, "queue"),
           shorten(ids, 30), shorten(cell(e, "reason"), 50)});
  }
  if (t.empty()) s.out << "no audit entries match\n";
  else t.print(s.out, s.columns);
  next_page_hint(s, answer);
  return kExitOk;
}

// /healthz (the process answers) or, with --ready, /readyz (its database is usable too). The
// Docker image's HEALTHCHECK runs this.
int health(Session& s, const Flags& f) {
  json::value answer = s.call("GET", f.ready ? "/readyz" : "/healthz");
  if (s.json) return s.print_json(answer), kExitOk;
  s.out << cell(answer, "status") << "\n";
  return kExitOk;
}

}  // namespace

int run_view_command(Session& s, const Invocation& inv) {
  const auto& c = inv.command;
  const auto& a = inv.args;
  if (c == "queues") return queues(s, inv.flags);
  if (c == "stats") return stats(s, a.at(0));
  if (c == "ls") return inv.flags.dead ? list_dead(s, inv.flags) : list_queue(s, inv.flags);
  if (c == "show") return show(s, a.at(0), a.at(1));
  if (c == "attempts") return attempts(s, a.at(0), a.at(1), inv.flags);
  if (c == "runs") return runs(s, inv.flags);
  if (c == "run") return run(s, a.at(0));
  if (c == "audit") return audit(s, inv.flags);
  if (c == "health") return health(s, inv.flags);
  if (c == "whoami") return whoami(s);
  throw UsageError("unknown command: " + c);
}

}  // namespace dlq::ctl
