// dlqctl's incident commands: incidents (the causes of dead letters, largest first), incident FP
// (one of them) and mute FP (silence its alerts while it is fixed). Replaying or dismissing one
// is `replay --incident FP` / `dismiss --incident FP`, the batch forms with its fingerprint.
#include <boost/json.hpp>

#include "model/time.hpp"
#include "output.hpp"
#include "session.hpp"

namespace dlq::ctl {
namespace json = boost::json;

namespace {

// "emails:3,billing:1" from an entry's queues.
std::string queues_text(const json::value& entry) {
  std::string text;
  for (const auto& kv : entry.at("queues").as_object()) {
    if (!text.empty()) text += ",";
    text += std::string(kv.key()) + ":" + json::serialize(kv.value());
  }
  return text.empty() ? "-" : text;
}

std::string job_type_text(const json::value& entry) {
  const auto& types = entry.at("job_types").as_array();
  return types.empty() ? "-" : std::string(types.at(0).as_string());
}

int incidents(Session& s, const Flags& f) {
  std::string target = "/dlq/incidents" + Query()
                                              .add("queue", f.queue)
                                              .add("job_type", f.job_type)
                                              .add("error_class", f.error_class)
                                              .add("since", f.since)
                                              .add("until", f.until)
                                              .add("sort", f.sort)
                                              .add("limit", f.limit)
                                              .add("cursor", f.cursor)
                                              .str();
  json::value answer = s.call("GET", target);
  if (s.json) return s.print_json(answer), kExitOk;
  Table t({"FINGERPRINT", "DEAD", "CLASS", "JOB TYPE", "QUEUES", "LAST DEATH", "TITLE"});
  for (const auto& i : answer.at("incidents").as_array()) {
    std::string title = cell(i, "title");
    if (!i.at("muted_until").is_null()) title = "[muted] " + title;
    t.row({cell(i, "fingerprint"), cell(i, "dead"), cell(i, "error_class"),
           shorten(job_type_text(i), 30), shorten(queues_text(i), 40), cell(i, "last_dead_at"),
           shorten(title, 70)});
  }
  if (t.empty()) s.out << "no incidents match\n";
  else t.print(s.out);
  const json::value& next = answer.at("next_cursor");
  if (next.is_string()) s.err << "(more: --cursor " << shown(next.get_string()) << ")\n";
  return kExitOk;
}

// The entry's members, its 48 hourly counts as their sum (--json shows them one by one).
int incident(Session& s, const std::string& fingerprint) {
  json::value answer = s.call("GET", "/dlq/incidents/" + url_encode(fingerprint));
  if (s.json) return s.print_json(answer), kExitOk;
  json::object shown_entry;
  for (const auto& kv : answer.as_object()) {
    if (kv.key() != "per_hour") {
      shown_entry[kv.key()] = kv.value();
      continue;
    }
    long long sum = 0;
    for (const auto& n : kv.value().as_array()) sum += n.to_number<long long>();
    shown_entry["dead_lettered_48h"] = sum;
  }
  print_fields(s.out, shown_entry);
  return kExitOk;
}

// --until now (or any time not ahead) un-mutes.
int mute(Session& s, const std::string& fingerprint, const Flags& f) {
  std::string until = *f.until == "now" ? format_rfc3339(SystemClock().now()) : *f.until;
  json::object body{{"until", until}};
  if (f.reason) body["reason"] = *f.reason;
  json::value value = body;
  json::value answer = s.call("POST", "/dlq/incidents/" + url_encode(fingerprint) + "/mute", &value);
  if (s.json) return s.print_json(answer), kExitOk;
  if (answer.at("muted_until").is_null()) {
    s.out << "incident " << cell(answer, "fingerprint") << " un-muted: its alerts go out again\n";
  } else {
    s.out << "incident " << cell(answer, "fingerprint") << " muted until "
          << cell(answer, "muted_until") << ": no incident alerts for it until then\n";
  }
  return kExitOk;
}

}  // namespace

int run_incident_command(Session& s, const Invocation& inv) {
  const auto& c = inv.command;
  if (c == "incidents") return incidents(s, inv.flags);
  if (c == "incident") return incident(s, inv.args.at(0));
  if (c == "mute") return mute(s, inv.args.at(0), inv.flags);
  throw UsageError("unknown command: " + c);
}

}  // namespace dlq::ctl
