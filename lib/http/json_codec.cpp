// JSON text for messages (written straight into the answer) and attempt history entries.
#include "http/json_codec.hpp"

#include <charconv>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace dlq::http {
namespace json = boost::json;

json::value masked_text(const std::optional<std::string>& text, const core::Redactor& redactor) {
  if (!text) return nullptr;
  return json::value(redactor.text(*text));
}

json::value time_json(const std::optional<TimeMs>& t) {
  if (!t) return nullptr;
  return json::value(format_rfc3339(*t));
}

namespace {

void key(std::string& out, const char* name) {
  out += '"';
  out += name;
  out += "\":";
}

void number(std::string& out, long long v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;
  out.append(buf, end);
}

void time_or_null(std::string& out, const std::optional<TimeMs>& t) {
  if (!t) {
    out += "null";
    return;
  }
  out += '"';
  out += format_rfc3339(*t);
  out += '"';
}

void string_or_null(std::string& out, const std::optional<std::string>& s) {
  if (s) {
    append_json_string(out, *s);
  } else {
    out += "null";
  }
}

template <class E>
void name_or_null(std::string& out, const std::optional<E>& v) {
  if (v) {
    append_json_string(out, to_string(*v));
  } else {
    out += "null";
  }
}

}  // namespace

void append_message(std::string& out, const Message& m, const MessageView& view,
                    const core::Redactor& redactor) {
  bool people = view.audience == Audience::people;
  out += "{";
  key(out, "id"); number(out, m.id);
  out += ','; key(out, "queue"); append_json_string(out, m.queue);
  out += ','; key(out, "payload");
  append_json_string(out, people ? redactor.payload(m.payload) : m.payload);
  out += ','; key(out, "status"); append_json_string(out, to_string(m.status));
  out += ','; key(out, "retry_count"); number(out, m.retry_count);
  out += ','; key(out, "max_retries"); number(out, m.max_retries);
  out += ','; key(out, "retry_after"); time_or_null(out, m.retry_after);
  out += ','; key(out, "last_error");
  if (m.last_error) {
    append_json_string(out, people ? redactor.text(*m.last_error) : *m.last_error);
  } else {
    out += "null";
  }
  out += ','; key(out, "created_at"); time_or_null(out, m.created_at);
  out += ','; key(out, "updated_at"); time_or_null(out, m.updated_at);
  out += ','; key(out, "priority"); number(out, m.priority);
  out += ','; key(out, "job_type"); string_or_null(out, m.job_type);
  out += ','; key(out, "idempotency_key"); string_or_null(out, m.idempotency_key);
  out += ','; key(out, "error_class"); name_or_null(out, m.error_class);
  out += ','; key(out, "dead_reason"); name_or_null(out, m.dead_reason);
  out += ','; key(out, "checkpoint"); string_or_null(out, m.checkpoint);
  out += ','; key(out, "lease_expiries"); number(out, m.lease_expiries);
  out += ','; key(out, "attempts"); number(out, m.attempts);
  out += ','; key(out, "first_attempt_at"); time_or_null(out, m.first_attempt_at);
  out += ','; key(out, "last_attempt_at"); time_or_null(out, m.last_attempt_at);
  out += ','; key(out, "dead_at"); time_or_null(out, m.dead_at);
  out += ','; key(out, "replay_count"); number(out, m.replay_count);
  out += ','; key(out, "lease_expires_at"); time_or_null(out, m.lease_expires_at);
  out += ','; key(out, "fingerprint"); string_or_null(out, m.fingerprint);
  out += ','; key(out, "title"); string_or_null(out, m.title);
  if (view.with_lease_id) {
    out += ','; key(out, "lease_id"); string_or_null(out, m.lease_id);
    out += ','; key(out, "effects"); out += '[';
    for (std::size_t i = 0; i < m.effects.size(); ++i) {
      if (i > 0) out += ',';
      out += json::serialize(effect_json(m.effects[i], view.audience, redactor));
    }
    out += ']';
    // A trial run (issue 36) comes as its message under the trial's lease, its id last.
    if (m.trial_id) {
      out += ','; key(out, "trial_id"); number(out, *m.trial_id);
    }
  }
  out += '}';
}

std::string message_text(const Message& m, const MessageView& view, const core::Redactor& redactor) {
  std::string out;
  out.reserve(512 + m.payload.size());
  append_message(out, m, view, redactor);
  return out;
}

json::value message_value(const Message& m, const MessageView& view,
                          const core::Redactor& redactor) {
  // Stored text is passed through byte for byte by the writer; reading it back must not refuse
  // what the writer let through, so that serializing the value gives the writer's bytes again.
  json::parse_options bytes_as_written;
  bytes_as_written.allow_invalid_utf8 = true;
  return json::parse(message_text(m, view, redactor), {}, bytes_as_written);
}

std::string message_list_text(std::string_view list_key, const std::vector<Message>& messages,
                              const MessageView& view, const core::Redactor& redactor) {
  std::string out = "{\"";
  out += list_key;
  out += "\":[";
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (i > 0) out += ',';
    append_message(out, messages[i], view, redactor);
  }
  out += "],\"count\":";
  number(out, static_cast<long long>(messages.size()));
  out += '}';
  return out;
}

json::object attempt_json(const AttemptRecord& a, const core::Redactor& redactor) {
  auto masked = [&redactor](const std::optional<std::string>& s) { return masked_text(s, redactor); };
  json::object o;
  o["attempt"] = a.attempt;
  o["claimed_at"] = time_json(a.claimed_at);
  if (a.under_way) {
    o["finished_at"] = nullptr;
    o["outcome"] = nullptr;
  } else {
    o["finished_at"] = format_rfc3339(a.finished_at);
    o["outcome"] = to_string(a.outcome);
  }
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
  o["count"] = a.count;
  o["fingerprint"] = optional_string(a.fingerprint);
  o["title"] = optional_string(a.title);
  o["life"] = a.life;
  o["replay_id"] = a.replay_id ? json::value(*a.replay_id) : json::value(nullptr);
  o["worker_version"] = optional_string(a.worker_version);
  if (a.trial) {
    json::parse_options bytes_as_written;
    bytes_as_written.allow_invalid_utf8 = true;
    std::error_code ec;
    json::value trial = json::parse(*a.trial, ec, {}, bytes_as_written);
    o["trial"] = ec ? json::value(nullptr) : std::move(trial);
  } else {
    o["trial"] = nullptr;
  }
  return o;
}

json::object effect_json(const Effect& e, Audience audience, const core::Redactor& redactor) {
  bool people = audience == Audience::people;
  json::object o;
  o["key"] = e.key;
  o["state"] = to_string(e.state);
  o["description"] = people ? masked_text(e.description, redactor) : optional_string(e.description);
  if (e.result) {
    o["result"] = people ? redactor.payload(*e.result) : *e.result;
  } else {
    o["result"] = nullptr;
  }
  o["attempt"] = e.attempt;
  o["recorded_at"] = format_rfc3339(e.recorded_at);
  o["resolved_by"] = optional_string(e.resolved_by);
  return o;
}

}  // namespace dlq::http
