#include "http/json_codec.hpp"

namespace dlq::http {
namespace json = boost::json;

namespace {

template <class T>
json::value optional_string(const std::optional<T>& v) {
  if (!v) return nullptr;
  if constexpr (std::is_same_v<T, std::string>) {
    return json::value(*v);
  } else {
    return json::value(to_string(*v));
  }
}

}  // namespace

json::value time_json(const std::optional<TimeMs>& t) {
  if (!t) return nullptr;
  return json::value(format_rfc3339(*t));
}

json::object message_json(const Message& m, const MessageView& view,
                          const core::Redactor& redactor) {
  bool people = view.audience == Audience::people;
  json::object o(24);
  o["id"] = m.id;
  o["queue"] = m.queue;
  o["payload"] = people ? redactor.payload(m.payload) : m.payload;
  o["status"] = to_string(m.status);
  o["retry_count"] = m.retry_count;
  o["max_retries"] = m.max_retries;
  o["retry_after"] = time_json(m.retry_after);
  if (m.last_error) {
    o["last_error"] = people ? redactor.text(*m.last_error) : *m.last_error;
  } else {
    o["last_error"] = nullptr;
  }
  o["created_at"] = format_rfc3339(m.created_at);
  o["updated_at"] = format_rfc3339(m.updated_at);
  o["priority"] = m.priority;
  o["job_type"] = optional_string(m.job_type);
  o["idempotency_key"] = optional_string(m.idempotency_key);
  o["error_class"] = optional_string(m.error_class);
  o["dead_reason"] = optional_string(m.dead_reason);
  o["checkpoint"] = optional_string(m.checkpoint);
  o["lease_expiries"] = m.lease_expiries;
  o["attempts"] = m.attempts;
  o["first_attempt_at"] = time_json(m.first_attempt_at);
  o["last_attempt_at"] = time_json(m.last_attempt_at);
  o["dead_at"] = time_json(m.dead_at);
  o["replay_count"] = m.replay_count;
  o["lease_expires_at"] = time_json(m.lease_expires_at);
  if (view.with_lease_id) o["lease_id"] = optional_string(m.lease_id);
  return o;
}

json::object attempt_json(const AttemptRecord& a, const core::Redactor& redactor) {
  auto masked = [&redactor](const std::optional<std::string>& s) -> json::value {
    if (!s) return nullptr;
    return json::value(redactor.text(*s));
  };
  json::object o;
  o["attempt"] = a.attempt;
  o["claimed_at"] = time_json(a.claimed_at);
  o["finished_at"] = format_rfc3339(a.finished_at);
  o["outcome"] = to_string(a.outcome);
  o["worker"] = optional_string(a.worker);
  o["error"] = masked(a.error);
  o["error_class"] = optional_string(a.error_class);
  o["stack"] = masked(a.stack);
  o["cause"] = masked(a.cause);
  o["actor"] = optional_string(a.actor);
  o["reason"] = optional_string(a.reason);
  if (a.previous_payload) {
    o["previous_payload"] = redactor.payload(*a.previous_payload);
  } else {
    o["previous_payload"] = nullptr;
  }
  return o;
}

}  // namespace dlq::http
