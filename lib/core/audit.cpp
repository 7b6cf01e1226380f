// Audit entries for single-message actions and incident mutes: who, what, why, and the result
// in `details`.
#include "core/audit.hpp"

#include <boost/json.hpp>

namespace dlq::core {
namespace json = boost::json;

namespace {

AuditEntry entry_for(const Message& m, std::string action, const std::optional<std::string>& actor,
                     const std::optional<std::string>& reason, TimeMs now) {
  AuditEntry e;
  e.at = now;
  e.actor = actor;
  e.action = std::move(action);
  e.queue = m.queue;
  e.message_ids = {m.id};
  e.reason = reason;
  return e;
}

json::value time_or_null(const std::optional<TimeMs>& t) {
  if (!t) return nullptr;
  return json::value(format_rfc3339(*t));
}

}  // namespace

AuditEntry replay_audit(const Message& before, const Message& after, const ReplayInput& in,
                        const Redactor& redactor, TimeMs now) {
  bool edited = in.payload && *in.payload != before.payload;
  AuditEntry e = entry_for(before, edited ? "payload_edit" : "replay", in.actor, in.reason, now);
  json::object d;
  d["status_before"] = to_string(before.status);
  d["status"] = to_string(after.status);
  d["replay_count"] = after.replay_count;
  d["force"] = in.force;
  d["run_at"] = time_or_null(after.retry_after);
  if (edited) {
    d["previous_payload"] = redactor.payload(before.payload);
    d["payload"] = redactor.payload(after.payload);
  }
  if (!in.resolve_effects.empty()) {
    json::object resolved;
    for (const auto& [key, done] : in.resolve_effects) resolved[key] = done ? "done" : "forget";
    d["resolve_effects"] = std::move(resolved);
  }
  e.details = json::serialize(d);
  return e;
}

AuditEntry dismiss_audit(const Message& before, const Message& after,
                         const std::optional<std::string>& reason,
                         const std::optional<std::string>& actor, TimeMs now) {
  AuditEntry e = entry_for(before, "dismiss", actor, reason, now);
  json::object d;
  d["status_before"] = to_string(before.status);
  d["status"] = to_string(after.status);
  e.details = json::serialize(d);
  return e;
}

AuditEntry incident_mute_audit(const std::string& fingerprint, std::optional<TimeMs> until,
                               std::optional<TimeMs> previous_until,
                               const std::optional<std::string>& reason,
                               const std::optional<std::string>& actor, TimeMs now) {
  AuditEntry e;
  e.at = now;
  e.actor = actor;
  e.action = "incident_mute";
  e.filter = json::serialize(json::object{{"fingerprint", fingerprint}});
  e.reason = reason;
  e.details = json::serialize(json::object{{"until", time_or_null(until)},
                                           {"previous_until", time_or_null(previous_until)}});
  return e;
}

}  // namespace dlq::core
