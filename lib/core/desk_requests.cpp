// The dead-letter desk's request decoding.
#include "core/desk_requests.hpp"

#include <boost/json/value.hpp>

#include "core/field_reader.hpp"
#include "model/fingerprint.hpp"

namespace dlq::core {
namespace json = boost::json;

namespace {

constexpr std::size_t kMaxJobTypeBytes = 128;
constexpr std::size_t kMaxFilterIds = 10000;
constexpr std::size_t kMaxTokenBytes = 128;
constexpr long long kMaxDelaySeconds = 7LL * 86400;

template <class E, class Parse>
void enum_member(FieldReader& r, std::string_view key, std::optional<E>& out, Parse parse,
                 const char* names) {
  auto text = r.string(key, 64, false);
  if (!text) return;
  if (auto v = parse(*text)) {
    out = *v;
  } else {
    r.add(key, std::string(key) + " must be one of " + names, "invalid");
  }
}

// The `filter` object of a batch action: members reported as filter.<member>.
void decode_filter(const json::object& body, FieldErrors& errors, store::DeadFilter& out) {
  const json::value* v = body.if_contains("filter");
  if (!v) {
    errors.push_back({"filter", "filter is required (an empty object matches every dead message)",
                      "required"});
    return;
  }
  if (!v->is_object()) {
    errors.push_back({"filter", "filter must be an object", "invalid"});
    return;
  }
  const std::string prefix = "filter.";
  FieldReader r(v->get_object(), errors, prefix);
  if (auto queue = r.string("queue", 64, false)) {
    if (valid_queue_name(*queue)) {
      out.queue = *queue;
    } else {
      r.add("queue", "queue must be a queue name ([A-Za-z0-9_-]{1,64})", "invalid");
    }
  }
  out.job_type = r.string("job_type", kMaxJobTypeBytes, false, false);
  enum_member(r, "error_class", out.error_class, parse_error_class,
              "transient, throttled, timeout, not_found, invalid_input, auth, unknown, "
              "uncertain_effect");
  enum_member(r, "dead_reason", out.dead_reason, parse_dead_reason,
              "retries_exhausted, non_retryable, retry_window_exceeded, lease_expired, "
              "max_receive_count");
  if (auto fingerprint = r.string("fingerprint", 64, false)) {
    if (valid_fingerprint(*fingerprint)) {
      out.fingerprint = *fingerprint;
    } else {
      r.add("fingerprint", "fingerprint must be 16 lowercase hex digits", "invalid");
    }
  }
  if (auto dlq = r.string("dead_letter_queue", 64, false)) {
    if (valid_queue_name(*dlq)) {
      out.dead_letter_queue = *dlq;
    } else {
      r.add("dead_letter_queue", "dead_letter_queue must be a queue name ([A-Za-z0-9_-]{1,64})",
            "invalid");
    }
  }
  out.since = r.timestamp("since");
  out.until = r.timestamp("until");
  if (const json::value* ids = r.get("ids")) {
    bool ok = ids->is_array() && !ids->get_array().empty() &&
              ids->get_array().size() <= kMaxFilterIds;
    if (ok) {
      for (const auto& id : ids->get_array()) {
        if (!id.is_int64() || id.get_int64() <= 0) {
          ok = false;
          break;
        }
        out.ids.push_back(id.get_int64());
      }
    }
    if (!ok) {
      out.ids.clear();
      r.add("ids", "ids must be an array of 1 to 10000 message ids", "invalid");
    }
  }
}

// dry_run and confirm_token: one of them says what the request is.
void decode_step(FieldReader& r, bool& dry_run, std::string& token) {
  dry_run = r.boolean("dry_run").value_or(false);
  auto t = r.string("confirm_token", kMaxTokenBytes, false, false);
  if (t) token = *t;
  if (!dry_run && !t && !r.get("confirm_token")) {
    r.add("confirm_token",
          "send dry_run: true for a preview, or the preview's confirm_token to go ahead",
          "required");
  }
}

std::optional<std::string> query_fingerprint(const QueryParams& query, FieldErrors& errors) {
  const std::string* fingerprint = query_value(query, "fingerprint");
  if (!fingerprint) return std::nullopt;
  if (valid_fingerprint(*fingerprint)) return *fingerprint;
  errors.push_back({"fingerprint", "fingerprint must be 16 lowercase hex digits", "invalid"});
  return std::nullopt;
}

std::optional<std::string> query_job_type(const QueryParams& query, FieldErrors& errors) {
  const std::string* job_type = query_value(query, "job_type");
  if (!job_type) return std::nullopt;
  if (!job_type->empty() && job_type->size() <= kMaxJobTypeBytes) return *job_type;
  errors.push_back({"job_type", "job_type must be 1 to 128 bytes", "invalid"});
  return std::nullopt;
}

std::optional<ErrorClass> query_error_class(const QueryParams& query, FieldErrors& errors) {
  const std::string* c = query_value(query, "error_class");
  if (!c) return std::nullopt;
  if (auto v = parse_error_class(*c)) return v;
  errors.push_back({"error_class", "error_class is not a known error class", "invalid"});
  return std::nullopt;
}

// An incident cursor: the sort's letter, the last entry's sort value and its fingerprint, as
// "d.<dead>.<fingerprint>" or "l.<last_dead_at ms>.<fingerprint>".
char cursor_letter(store::IncidentSort sort) { return sort == store::IncidentSort::dead ? 'd' : 'l'; }

std::optional<store::IncidentPosition> parse_cursor(std::string_view text, store::IncidentSort sort) {
  if (text.size() < 4 || text[0] != cursor_letter(sort) || text[1] != '.') return std::nullopt;
  text.remove_prefix(2);
  auto dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  auto value = parse_message_id(text.substr(0, dot));  // 1 to 18 digits
  bool zero = text.substr(0, dot) == "0";
  if (!value && !zero) return std::nullopt;
  std::string_view fingerprint = text.substr(dot + 1);
  if (!valid_fingerprint(fingerprint)) return std::nullopt;
  return store::IncidentPosition{value.value_or(0), std::string(fingerprint)};
}

}  // namespace

FieldErrors decode_incidents(const QueryParams& query, store::IncidentQuery& out) {
  FieldErrors errors;
  out.queue = query_queue(query, "queue", errors);
  out.job_type = query_job_type(query, errors);
  out.error_class = query_error_class(query, errors);
  out.since = query_time(query, "since", errors);
  out.until = query_time(query, "until", errors);
  if (const std::string* sort = query_value(query, "sort")) {
    if (*sort == "dead") {
      out.sort = store::IncidentSort::dead;
    } else if (*sort == "last_dead_at") {
      out.sort = store::IncidentSort::last_dead_at;
    } else {
      errors.push_back({"sort", "sort must be dead or last_dead_at", "invalid"});
    }
  }
  out.limit = static_cast<int>(query_integer(query, "limit", "limit", 1, 100, errors).value_or(20));
  if (const std::string* cursor = query_value(query, "cursor")) {
    out.after = parse_cursor(*cursor, out.sort);
    if (!out.after) {
      errors.push_back({"cursor", "cursor must be a next_cursor of a page in the same sort", "invalid"});
    }
  }
  return errors;
}

std::string incident_cursor(store::IncidentSort sort, const store::Incident& last) {
  long long value = sort == store::IncidentSort::dead ? last.dead : last.last_dead_at.value_or(0);
  return std::string(1, cursor_letter(sort)) + "." + std::to_string(value) + "." + last.fingerprint;
}

FieldErrors decode_dead_list(const QueryParams& query, store::DeadListParams& out) {
  FieldErrors errors;
  auto& f = out.filter;
  f.queue = query_queue(query, "queue", errors);
  f.job_type = query_job_type(query, errors);
  f.error_class = query_error_class(query, errors);
  if (const std::string* r = query_value(query, "dead_reason")) {
    if (auto v = parse_dead_reason(*r)) {
      f.dead_reason = *v;
    } else {
      errors.push_back({"dead_reason", "dead_reason is not a known dead reason", "invalid"});
    }
  }
  f.fingerprint = query_fingerprint(query, errors);
  f.dead_letter_queue = query_queue(query, "dead_letter_queue", errors);
  f.since = query_time(query, "since", errors);
  f.until = query_time(query, "until", errors);
  std::optional<long long> after;
  FieldErrors paging = decode_page(query, out.limit, after);
  errors.insert(errors.end(), paging.begin(), paging.end());
  out.after_id = after;
  return errors;
}

FieldErrors decode_page(const QueryParams& query, int& limit, std::optional<long long>& after_id) {
  FieldErrors errors;
  limit = static_cast<int>(query_integer(query, "limit", "limit", 1, 100, errors).value_or(20));
  after_id = query_integer(query, "after_id", "after_id", 1, 999999999999999999LL, errors);
  return errors;
}

FieldErrors decode_runs(const QueryParams& query, RunsQuery& out) {
  FieldErrors errors = decode_page(query, out.limit, out.after_id);
  out.message_id =
      query_integer(query, "message_id", "message_id", 1, 999999999999999999LL, errors);
  return errors;
}

FieldErrors decode_dead_hourly(const QueryParams& query, HourlyQuery& out) {
  FieldErrors errors;
  out.queue = query_queue(query, "queue", errors);
  out.hours = static_cast<int>(query_integer(query, "hours", "hours", 1, 168, errors).value_or(24));
  return errors;
}

FieldErrors decode_batch_replay(const json::object& body, const Config& config,
                                BatchReplayRequest& out) {
  FieldErrors errors;
  auto& c = out.confirmation;
  decode_filter(body, errors, c.filter);
  FieldReader r(body, errors);
  decode_step(r, out.dry_run, c.confirm_token);
  if (auto delay = r.integer("delay_seconds", 0, kMaxDelaySeconds)) c.delay_ms = *delay * 1000;
  c.rate_per_second = r.number("rate_per_second", 0.1, 1000);
  c.keep_order = r.boolean("keep_order").value_or(false);
  c.reason = r.text("reason", kMaxReasonBytes);
  c.acknowledge_side_effects = r.boolean("acknowledge_side_effects").value_or(false);
  if (!c.rate_per_second) c.rate_per_second = config.batch_replay.default_rate_per_second;
  return errors;
}

FieldErrors decode_batch_dismiss(const json::object& body, BatchDismissRequest& out) {
  FieldErrors errors;
  auto& c = out.confirmation;
  decode_filter(body, errors, c.filter);
  FieldReader r(body, errors);
  c.reason = r.text("reason", kMaxReasonBytes);
  decode_step(r, out.dry_run, c.confirm_token);
  return errors;
}

FieldErrors decode_incident_mute(const json::object& body, IncidentMuteRequest& out) {
  FieldErrors errors;
  FieldReader r(body, errors);
  if (!r.get("until")) {
    r.add("until", "until is required (a time in the past un-mutes)", "required");
  } else if (auto until = r.timestamp("until")) {
    out.until = *until;
  }
  out.reason = r.text("reason", kMaxReasonBytes);
  return errors;
}

}  // namespace dlq::core
