// dlqctl's commands that change things: replay and dismiss (one message, or a dead-letter batch
// through the server's preview -> confirm_token -> run steps), purge, enqueue, pausing/resuming/
// cancelling replay runs. Batch actions and purge ask before they act unless --yes. Trials:
// commands_trial.cpp; what both share: act_support.
#include <cctype>
#include <iostream>

#include <boost/json.hpp>

#include "act_support.hpp"
#include "output.hpp"
#include "session.hpp"

namespace dlq::ctl {
namespace json = boost::json;

namespace {

json::object dead_filter(const Flags& f) {
  json::object filter;
  auto put = [&](const char* key, const std::optional<std::string>& v) {
    if (v) filter[key] = *v;
  };
  put("queue", f.queue);
  put("job_type", f.job_type);
  put("error_class", f.error_class);
  put("dead_reason", f.dead_reason);
  put("since", f.since);
  put("until", f.until);
  put("fingerprint", f.incident);
  return filter;
}

std::string describe_filter(const json::object& filter) {
  if (filter.empty()) return "every dead message";
  std::string text;
  for (const auto& kv : filter) {
    if (!text.empty()) text += ", ";
    text += shown(kv.key()) + "=" + shown(kv.value().as_string());
  }
  return text;
}

// The job types a preview says need --acknowledge-side-effects (configured not idempotent).
json::array needs_acknowledgement(const json::value& preview) {
  const auto* needs = preview.as_object().if_contains("needs_acknowledgement");
  return needs && needs->is_array() ? needs->get_array() : json::array{};
}

// The preview for people: what matched, by job type, a sample, what needs acknowledging.
void print_preview(std::ostream& out, const json::value& p, const json::object& filter,
                   std::size_t columns) {
  out << cell(p, "matched") << " dead message(s) match " << describe_filter(filter) << "\n";
  const auto& by_type = p.at("by_job_type").as_object();
  if (!by_type.empty()) {
    Table t({"JOB TYPE", "MESSAGES"});
    for (const auto& kv : by_type) t.row({shown(kv.key()), json_shown(kv.value())});
    t.print(out, columns);
  }
  const auto& sample = p.at("sample").as_array();
  if (!sample.empty()) {
    out << "sample:\n";
    Table t({"ID", "QUEUE", "JOB TYPE", "ERROR CLASS", "DEAD AT", "LAST ERROR"});
    for (const auto& m : sample) {
      t.row({cell(m, "id"), cell(m, "queue"), cell(m, "job_type"), cell(m, "error_class"),
             cell(m, "dead_at"), shorten(cell(m, "last_error"), 50)});
    }
    t.print(out, columns);
  }
  if (const json::array needs = needs_acknowledgement(p); !needs.empty()) {
    out << "not idempotent (needs --acknowledge-side-effects): " << json_shown(needs) << "\n";
  }
  // Messages holding a side effect left started (issue 36): it may have happened. Their workers
  // fail them uncertain_effect again unless a handler checks; one by one an operator decides.
  const json::value* uncertain = p.as_object().if_contains("uncertain_effects");
  if (uncertain && uncertain->is_object() && cell(*uncertain, "count") != "0") {
    out << "uncertain side effects: " << cell(*uncertain, "count")
        << " message(s) hold a started effect that may have happened (ids "
        << json_shown(uncertain->at("ids")) << "); resolve each first: dlqctl attempts Q ID, then "
           "replay Q ID --resolve-effect KEY=done|forget\n";
  }
  out << "preview expires at " << cell(p, "expires_at") << "\n";
}

std::string progress_line(const json::value& run) {
  return "run " + cell(run, "replay_id") + ": " + cell(run, "status") + ", " + cell(run, "replayed") +
         "/" + cell(run, "matched") + " replayed, " + cell(run, "skipped") + " skipped";
}

void draw_bar(std::ostream& out, const json::value& run) {
  constexpr int kWidth = 30;
  long long matched = run.at("matched").to_number<long long>();
  long long done = run.at("replayed").to_number<long long>() + run.at("skipped").to_number<long long>();
  int filled = matched > 0 ? static_cast<int>(done * kWidth / matched) : kWidth;
  out << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, '-') << "] "
      << progress_line(run) << "   " << std::flush;
}

std::string joined(const json::array& words) {
  std::string text;
  for (const auto& w : words) text += (text.empty() ? "" : ", ") + shown(w.as_string());
  return text;
}

}  // namespace

// Polls the run until it is done or cancelled: a bar on a terminal, a line per change otherwise
// (none with --json, which prints the final state). Ctrl-C stops following, never the run.
int follow_run(Session& s, long long id) {
  const std::string target = "/dlq/replays/" + std::to_string(id);
  const bool bar = s.tty && !s.json;
  std::string last;
  json::value run;
  catch_interrupt();
  for (;;) {
    run = s.call("GET", target);
    std::string status = cell(run, "status");
    if (bar) {
      draw_bar(s.out, run);
    } else if (!s.json) {
      std::string line = progress_line(run);
      if (status == "scheduled") line += ", starts at " + cell(run, "start_at");
      if (line != last) s.out << line << "\n" << std::flush;
      last = line;
    }
    if (status == "done" || status == "cancelled") break;
    if (interrupted_during(kPollInterval)) {
      if (bar) s.out << "\n" << std::flush;
      s.err << "stopped following; run " << id << " goes on: dlqctl run " << id << " --follow\n";
      return kExitInterrupted;
    }
  }
  if (bar) s.out << "\n";
  if (s.json) {
    s.print_json(run);
  } else {
    s.out << "run " << id << " " << cell(run, "status") << ": " << cell(run, "replayed")
          << " replayed, " << cell(run, "skipped") << " skipped; so far " << cell(run, "succeeded")
          << " succeeded, " << cell(run, "dead_again") << " dead again, " << cell(run, "pending")
          << " pending (dlqctl run " << id << " shows more)\n";
  }
  if (cell(run, "status") == "cancelled") {
    s.err << "dlqctl: run " << id << " was cancelled before it finished\n";
    return kExitRefused;
  }
  return kExitOk;
}

namespace {

int replay_one(Session& s, const std::string& queue, const std::string& id, const Flags& f) {
  json::object body;
  if (f.reason) body["reason"] = *f.reason;
  const std::string edited = add_edited_payload(s, f, body);
  if (f.delay) body["delay_seconds"] = *f.delay;
  if (f.force) body["force"] = true;
  if (f.resolve_effects) {
    json::object resolve;
    for (const auto& item : *f.resolve_effects) {
      auto eq = item.rfind('=');  // checked by the parser: KEY=done|forget
      resolve[item.substr(0, eq)] = item.substr(eq + 1);
    }
    body["resolve_effects"] = std::move(resolve);
  }
  if (f.dry_run) body["dry_run"] = true;
  json::value v = body;
  json::value answer;
  try {
    answer = on_message(s, queue, [&] { return s.call("POST", message_path(queue, id, "replay"), &v); });
  } catch (const ServerRefused& e) {
    rethrow_if_edit_not_json(e, f, edited);
    if (problem_type(e.body) == "invalid-state" && !f.force) {
      // Only dead messages replay; a dismissed one does with --force.
      std::string status;
      try {
        status = cell(s.call("GET", message_path(queue, id)), "status");
      } catch (const std::exception&) {
      }
      if (status == "dismissed") rethrow_naming_flags(e, "the message was dismissed: add --force to replay it");
    }
    rethrow_naming_flags(e);
  }
  if (s.json) return s.print_json(answer), kExitOk;
  if (f.dry_run) {
    s.out << "dry run: nothing changed; message " << shown(id) << " would become:\n";
    print_fields(s.out, answer.at("message").as_object());
    return kExitOk;
  }
  s.out << "replayed message " << cell(answer, "id") << " of " << cell(answer, "queue") << ": now "
        << cell(answer, "status");
  if (cell(answer, "retry_after") != "-") s.out << ", due at " << cell(answer, "retry_after");
  s.out << " (replay " << cell(answer, "replay_count") << ")\n";
  return kExitOk;
}

// Preview; nothing more for --dry-run or an empty match; else the question (unless --yes).
// Returns the preview, or nullopt when the command ends here with *exit_code.
std::optional<json::value> preview_and_ask(Session& s, const std::string& route, json::object body,
                                           const Flags& f, const std::string& verb, int* exit_code) {
  body["dry_run"] = true;
  json::value v = body;
  json::value preview = s.call("POST", route, &v);
  const json::object& filter = body.at("filter").as_object();
  long long matched = preview.at("matched").to_number<long long>();
  if (matched == 0 && filter.contains("queue")) name_if_unused(s, std::string(filter.at("queue").as_string()));
  if (f.dry_run) {
    if (s.json) s.print_json(preview);
    else print_preview(s.out, preview, filter, s.columns);
    *exit_code = kExitOk;
    return std::nullopt;
  }
  if (!f.yes || !s.json) print_preview(s.json ? s.err : s.out, preview, filter, s.columns);
  if (matched == 0) {
    if (s.json) s.print_json(preview);
    else s.out << "nothing to " << verb << "\n";
    *exit_code = kExitOk;
    return std::nullopt;
  }
  // Job types configured not idempotent: refused here, before any question, unless the
  // operator said they know (the server would refuse the confirm anyway).
  const json::array needs = verb == "replay" ? needs_acknowledgement(preview) : json::array{};
  if (!needs.empty() && !f.acknowledge) {
    s.err << "dlqctl: job type(s) " << joined(needs)
          << " are configured not idempotent: replaying them may repeat their side effects; "
             "add --acknowledge-side-effects to replay them (nothing was replayed)\n";
    *exit_code = kExitUsage;
    return std::nullopt;
  }
  std::string question = verb + " " + std::to_string(matched) + " message(s)?";
  question.front() = static_cast<char>(std::toupper(static_cast<unsigned char>(question.front())));
  if (!needs.empty()) {
    question += " This repeats the side effects of " + joined(needs) + " (not idempotent).";
  }
  if (!f.yes && !s.confirm(question)) {
    s.err << "cancelled: nothing was " << (verb == "replay" ? "replayed" : "dismissed") << "\n";
    *exit_code = kExitRefused;
    return std::nullopt;
  }
  return preview;
}

int replay_dead(Session& s, const Flags& f) {
  json::object body{{"filter", dead_filter(f)}};
  int code = kExitOk;
  auto preview = preview_and_ask(s, "/dlq/replay", body, f, "replay", &code);
  if (!preview) return code;
  body["confirm_token"] = preview->at("confirm_token");
  if (f.rate) body["rate_per_second"] = *f.rate;
  if (f.delay) body["delay_seconds"] = *f.delay;
  if (f.reason) body["reason"] = *f.reason;
  if (f.keep_order) body["keep_order"] = true;
  if (f.acknowledge) body["acknowledge_side_effects"] = true;
  json::value v = body;
  json::value started;
  try {
    started = s.call("POST", "/dlq/replay", &v);
  } catch (const ServerRefused& e) {
    rethrow_naming_flags(e);
  }
  long long id = started.at("replay_id").to_number<long long>();
  if (f.no_follow) {
    if (s.json) s.print_json(started);
    else s.out << "replay run " << id << " " << cell(started, "status") << " (" << cell(started, "matched")
               << " messages); follow it with: dlqctl run " << id << " --follow\n";
    return kExitOk;
  }
  if (!s.json) s.out << "replay run " << id << " started; following it (Ctrl-C stops following, not the run)\n";
  return follow_run(s, id);
}

int dismiss_one(Session& s, const std::string& queue, const std::string& id, const Flags& f) {
  json::value body = json::object{{"reason", *f.reason}};
  json::value answer = s.call("POST", message_path(queue, id, "dismiss"), &body);
  if (s.json) return s.print_json(answer), kExitOk;
  s.out << "dismissed message " << cell(answer, "id") << " of " << cell(answer, "queue") << "\n";
  return kExitOk;
}

int dismiss_dead(Session& s, const Flags& f) {
  json::object body{{"filter", dead_filter(f)}, {"reason", *f.reason}};
  int code = kExitOk;
  auto preview = preview_and_ask(s, "/dlq/dismiss", body, f, "dismiss", &code);
  if (!preview) return code;
  body["confirm_token"] = preview->at("confirm_token");
  json::value v = body;
  json::value answer = s.call("POST", "/dlq/dismiss", &v);
  if (s.json) return s.print_json(answer), kExitOk;
  s.out << "dismissed " << cell(answer, "dismissed") << " message(s); " << cell(answer, "skipped")
        << " skipped (no longer dead)\n";
  return kExitOk;
}

int purge(Session& s, const std::string& queue, const Flags& f) {
  const std::string& status = *f.status;
  if (status != "succeeded" && status != "dead" && status != "dismissed") {
    throw UsageError("purge --status must be succeeded, dead or dismissed");
  }
  if (!f.yes) {
    json::value stats = s.call("GET", queue_path(queue) + "/stats");
    std::string question = "Delete every " + status + " message of queue " + queue +
                           (f.before ? " that became " + status + " before " + *f.before : "") +
                           " (" + cell(stats, status) + " " + status +
                           " now)? This cannot be undone.";
    if (!s.confirm(question)) {
      s.err << "cancelled: nothing was purged\n";
      return kExitRefused;
    }
  }
  json::value answer = s.call(
      "DELETE", queue_path(queue) + "/messages" + Query().add("status", f.status).add("before", f.before).str());
  if (s.json) return s.print_json(answer), kExitOk;
  s.out << "purged " << cell(answer, "purged") << " " << status << " message(s) of " << shown(queue) << "\n";
  return kExitOk;
}

int enqueue(Session& s, const std::string& queue, const std::string& payload_arg, const Flags& f) {
  json::object body;
  body["payload"] = payload_arg == "-" ? read_text(s, "-") : payload_arg;
  if (f.max_retries) body["max_retries"] = *f.max_retries;
  if (f.job_type) body["job_type"] = *f.job_type;
  if (f.priority) body["priority"] = *f.priority;
  if (f.delay) body["delay_seconds"] = *f.delay;
  if (f.idempotency_key) body["idempotency_key"] = *f.idempotency_key;
  json::value v = body;
  Reply reply;
  json::value answer = s.call("POST", queue_path(queue) + "/messages", &v, &reply);
  if (s.json) return s.print_json(answer), kExitOk;
  if (reply.status == 200) {
    s.out << "not enqueued: message " << cell(answer, "id") << " (" << cell(answer, "status")
          << ") already holds idempotency key " << cell(answer, "idempotency_key") << "\n";
  } else {
    s.out << "enqueued message " << cell(answer, "id") << " to " << cell(answer, "queue") << " ("
          << cell(answer, "status") << ")\n";
  }
  return kExitOk;
}

int change_run(Session& s, const std::string& id, const std::string& action) {
  json::value body = json::object{};
  json::value answer = s.call("POST", "/dlq/replays/" + url_encode(id) + "/" + action, &body);
  if (s.json) return s.print_json(answer), kExitOk;
  s.out << progress_line(answer) << "\n";
  return kExitOk;
}

}  // namespace

int run_action_command(Session& s, const Invocation& inv) {
  const auto& c = inv.command;
  const auto& a = inv.args;
  const Flags& f = inv.flags;
  if (c == "replay") return f.dead ? replay_dead(s, f) : replay_one(s, a.at(0), a.at(1), f);
  if (c == "dismiss") return f.dead ? dismiss_dead(s, f) : dismiss_one(s, a.at(0), a.at(1), f);
  if (c == "purge") return purge(s, a.at(0), f);
  if (c == "enqueue") return enqueue(s, a.at(0), a.at(1), f);
  if (c == "trial") return trial_command(s, a.at(0), a.at(1), f);
  if (c == "run" && f.follow) return follow_run(s, std::stoll(a.at(0)));
  if (c == "run") return change_run(s, a.at(0), a.at(1));
  throw UsageError("unknown command: " + c);
}

}  // namespace dlq::ctl
