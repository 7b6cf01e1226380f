// dlqctl trial Q ID [--edit FILE|- [--not-json]] [--reason R] [--wait]: a trial run (issue 36) of
// a dead message, followed to its outcome and the side effects it would have caused.
#include <boost/json.hpp>

#include "act_support.hpp"
#include "output.hpp"
#include "session.hpp"

namespace dlq::ctl {
namespace json = boost::json;

namespace {

// A trial's outcome in a line: "trial 4 of emails/42: succeeded (worker w1 2.4.1); would: charge 10 EUR".
std::string trial_line(const json::value& t) {
  std::string line = "trial " + cell(t, "trial_id") + " of " + cell(t, "queue") + "/" +
                     cell(t, "message_id") + ": " + cell(t, "status");
  if (cell(t, "worker") != "-") {
    line += " (worker " + cell(t, "worker");
    if (cell(t, "worker_version") != "-") line += " " + cell(t, "worker_version");
    line += ")";
  }
  if (cell(t, "error") != "-") {
    line += ": " + cell(t, "error");
    if (cell(t, "error_class") != "-") line += " [" + cell(t, "error_class") + "]";
  }
  return line;
}

void print_would_effects(Session& s, const json::value& t) {
  const json::value* would = t.as_object().if_contains("would_effects");
  if (!would || !would->is_array() || would->get_array().empty()) return;
  s.out << "it would have caused:\n";
  for (const auto& e : would->get_array()) {
    s.out << "  " << cell(e, "key");
    if (cell(e, "description") != "-") s.out << ": " << cell(e, "description");
    s.out << "\n";
  }
}

}  // namespace

// trial Q ID: starts a trial run (or finds the open one); --wait follows it to its end, polling
// every second: exit 0 when it succeeded, 1 when it failed or expired.
int trial_command(Session& s, const std::string& queue, const std::string& id,
                  const Flags& f) {
  json::object body;
  if (f.reason) body["reason"] = *f.reason;
  const std::string edited = add_edited_payload(s, f, body);
  json::value v = body;
  json::value t;
  try {
    t = on_message(s, queue, [&] { return s.call("POST", message_path(queue, id, "trials"), &v); });
  } catch (const ServerRefused& e) {
    rethrow_if_edit_not_json(e, f, edited);
    rethrow_naming_flags(e);
  }
  const std::string target = message_path(queue, id, "trials") + "/" + cell(t, "trial_id");
  if (!s.json) s.out << trial_line(t) << "\n" << std::flush;
  if (!f.wait) return s.json ? (s.print_json(t), kExitOk) : kExitOk;
  catch_interrupt();
  std::string last = cell(t, "status");
  while (last == "pending" || last == "running") {
    if (interrupted_during(kPollInterval)) {
      s.err << "stopped waiting; the trial goes on: dlqctl trial " << queue << " " << id
            << " --wait\n";
      return kExitInterrupted;
    }
    t = s.call("GET", target);
    if (cell(t, "status") != last && !s.json) s.out << trial_line(t) << "\n" << std::flush;
    last = cell(t, "status");
  }
  if (s.json) {
    s.print_json(t);
  } else {
    print_would_effects(s, t);
    if (last == "expired" && cell(t, "worker") == "-") {
      s.err << "no worker took it within trials.timeout_seconds: is a worker running whose "
               "handler for this message's job type takes trials?\n";
    }
  }
  return last == "succeeded" ? kExitOk : kExitRefused;
}

}  // namespace dlq::ctl
