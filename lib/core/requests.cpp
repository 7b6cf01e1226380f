// Request decoding and validation, field by field in the documented order.
#include "core/requests.hpp"

#include "core/field_reader.hpp"

#include <algorithm>
#include <iterator>

#include <boost/json/value.hpp>

#include "model/fingerprint.hpp"

namespace dlq::core {
namespace json = boost::json;

namespace {

constexpr std::size_t kMaxErrorBytes = 1000;
constexpr std::size_t kMaxStackBytes = 16 * 1024;
constexpr std::size_t kMaxCauseBytes = 4096;
constexpr std::size_t kMaxCheckpointBytes = 4096;
constexpr std::size_t kMaxWorkerBytes = 128;
constexpr std::size_t kMaxWorkerVersionBytes = 64;
constexpr std::size_t kMaxJobTypeBytes = 128;
constexpr std::size_t kMaxIdempotencyKeyBytes = 256;
constexpr long long kMaxDelaySeconds = 365LL * 86400;
constexpr std::size_t kMaxJobTypesFilter = 100;

std::optional<TimeMs> delay_or_run_at(FieldReader& r, std::optional<TimeMs>& run_at) {
  auto delay = r.integer("delay_seconds", 0, kMaxDelaySeconds);
  run_at = r.timestamp("run_at");
  if (run_at && r.get("delay_seconds")) {
    r.add("run_at", "give either delay_seconds or run_at, not both", "invalid");
    run_at.reset();
  }
  if (delay) return *delay * kMillisPerSecond;
  return std::nullopt;
}

// The items of an acknowledgement list: {id, lease_id} objects with a positive integer id and,
// when given, a string lease_id. Returns one slot per item and adds each acknowledgement to `acks`.
std::vector<AckSlot> read_ack_items(const json::array& items, std::vector<AckItem>& acks) {
  std::vector<AckSlot> slots;
  slots.reserve(items.size());
  for (const auto& v : items) {
    const json::object* o = v.if_object();
    const json::value* id = o ? o->if_contains("id") : nullptr;
    const json::value* lease = o ? o->if_contains("lease_id") : nullptr;
    AckSlot& slot = slots.emplace_back();
    slot.id = id;
    if (!id || !id->is_int64() || id->get_int64() <= 0) {
      slot.refused = "each item needs an integer id";
    } else if (lease && !lease->is_string()) {
      slot.refused = "lease_id must be a string";
    } else {
      AckItem& ack = acks.emplace_back();
      ack.id = id->get_int64();
      if (lease) ack.lease_id = std::string(lease->get_string());
    }
  }
  return slots;
}

}  // namespace

// Query parameters are plain digits (leading zeros allowed) within [min, max].
std::optional<long long> query_integer(const QueryParams& query, std::string_view key,
                                       std::string_view field, long long min, long long max,
                                       FieldErrors& errors) {
  const std::string* raw = query_value(query, key);
  if (!raw) return std::nullopt;
  std::string message = std::string(field) + " must be an integer between " +
                        std::to_string(min) + " and " + std::to_string(max);
  bool digits = !raw->empty() && std::all_of(raw->begin(), raw->end(),
                                             [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) {
    errors.push_back({std::string(field), message, "invalid"});
    return std::nullopt;
  }
  std::string_view s = *raw;
  s.remove_prefix(std::min(s.find_first_not_of('0'), s.size()));
  if (s.size() > 18) {
    errors.push_back({std::string(field), message, "invalid"});
    return std::nullopt;
  }
  long long v = s.empty() ? 0 : std::stoll(std::string(s));
  if (v < min || v > max) {
    errors.push_back({std::string(field), message, "invalid"});
    return std::nullopt;
  }
  return v;
}

std::optional<std::string> query_queue(const QueryParams& query, std::string_view key,
                                       FieldErrors& errors) {
  const std::string* raw = query_value(query, key);
  if (!raw) return std::nullopt;
  if (valid_queue_name(*raw)) return *raw;
  errors.push_back({std::string(key), std::string(key) + " must be a queue name ([A-Za-z0-9_-]{1,64})",
                    "invalid"});
  return std::nullopt;
}

std::optional<TimeMs> query_time(const QueryParams& query, std::string_view key,
                                 FieldErrors& errors) {
  const std::string* raw = query_value(query, key);
  if (!raw) return std::nullopt;
  if (auto t = parse_timestamp(*raw)) return t;
  errors.push_back({std::string(key), std::string(key) + " must be an RFC 3339 timestamp", "invalid"});
  return std::nullopt;
}

const std::string* query_value(const QueryParams& q, std::string_view key) {
  for (const auto& [k, v] : q) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::optional<MessageId> parse_message_id(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  MessageId v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v <= 0) return std::nullopt;
  return v;
}

std::string sanitize_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\0') {
      out += "\xEF\xBF\xBD";
    } else {
      out += c;
    }
  }
  return out;
}

std::string truncate_utf8(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  std::size_t cut = max_bytes;
  // Step back over continuation bytes (10xxxxxx) so no character is split.
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut));
}

FieldErrors decode_enqueue(const json::object& body, const Config& config,
                           const QueuePolicy& policy, EnqueueRequest& out,
                           const std::string& prefix) {
  FieldErrors errors;
  FieldReader r(body, errors, prefix);
  auto payload = r.string("payload", static_cast<std::size_t>(config.limits.max_payload_bytes),
                          true, false);
  if (payload) out.message.payload = std::move(*payload);
  out.message.max_retries = static_cast<int>(r.integer("max_retries", 1, 10).value_or(policy.max_retries));
  out.message.job_type = r.string("job_type", kMaxJobTypeBytes, false, false);
  out.message.priority = static_cast<int>(r.integer("priority", 0, 9).value_or(0));
  out.delay_ms = delay_or_run_at(r, out.message.run_at);
  out.message.idempotency_key = r.string("idempotency_key", kMaxIdempotencyKeyBytes, false, false);
  return errors;
}

FieldErrors decode_enqueue_batch(const json::object& body, const Config& config,
                                 const QueuePolicy& policy, std::vector<EnqueueRequest>& out) {
  FieldErrors errors;
  const json::value* list = body.if_contains("messages");
  const json::array* items = list ? list->if_array() : nullptr;
  if (!list) {
    errors.push_back({"messages", "messages is required", "required"});
  } else if (!items || items->empty() || items->size() > kMaxBatchItems) {
    errors.push_back({"messages",
                      "messages must be an array of 1 to " + std::to_string(kMaxBatchItems) +
                          " messages",
                      "invalid"});
  } else {
    out.reserve(items->size());
    std::size_t i = 0;
    for (const auto& v : *items) {
      std::string prefix = "messages[" + std::to_string(i++) + "].";
      EnqueueRequest& item = out.emplace_back();
      if (const json::object* o = v.if_object()) {
        FieldErrors item_errors = decode_enqueue(*o, config, policy, item, prefix);
        errors.insert(errors.end(), std::make_move_iterator(item_errors.begin()),
                      std::make_move_iterator(item_errors.end()));
      } else {
        prefix.pop_back();  // the item itself: messages[i]
        errors.push_back({std::move(prefix), "each message must be an object", "invalid"});
      }
    }
  }
  return errors;
}

FieldErrors decode_ack_items(const json::object& body, AckRequest& out) {
  FieldErrors errors;
  const json::value* list = body.if_contains("items");
  const json::array* items = list ? list->if_array() : nullptr;
  if (!list) {
    errors.push_back({"items", "items is required", "required"});
  } else if (!items || items->empty() || items->size() > kMaxBatchItems) {
    errors.push_back({"items",
                      "items must be an array of 1 to " + std::to_string(kMaxBatchItems) +
                          " {id, lease_id} objects",
                      "invalid"});
  } else {
    out.acks.reserve(items->size());
    out.slots = read_ack_items(*items, out.acks);
  }
  return errors;
}

FieldErrors decode_list(const QueryParams& query, store::ListParams& out) {
  FieldErrors errors;
  if (const std::string* status = query_value(query, "status")) {
    if (auto s = parse_status(*status)) {
      out.status = *s;
    } else {
      errors.push_back({"status",
                        "status must be one of pending, processing, succeeded, dead, dismissed",
                        "invalid"});
    }
  }
  out.limit = static_cast<int>(query_integer(query, "limit", "limit", 1, 100, errors).value_or(20));
  out.offset =
      static_cast<int>(query_integer(query, "offset", "offset", 0, 1000000, errors).value_or(0));
  if (const std::string* order = query_value(query, "order")) {
    if (*order == "asc" || *order == "desc") {
      out.descending = *order == "desc";
    } else {
      errors.push_back({"order", "order must be asc or desc", "invalid"});
    }
  }
  if (const std::string* job_type = query_value(query, "job_type")) {
    if (job_type->empty()) {
      errors.push_back({"job_type", "job_type must not be empty", "invalid"});
    } else if (job_type->size() > 128) {
      errors.push_back({"job_type", "job_type must be at most 128 bytes", "too_long"});
    } else if (job_type->find('\0') != std::string::npos) {
      errors.push_back({"job_type", "job_type must not contain NUL characters", "invalid"});
    } else {
      out.job_type = *job_type;
    }
  }
  if (const std::string* error_class = query_value(query, "error_class")) {
    if (auto c = parse_error_class(*error_class)) {
      out.error_class = *c;
    } else {
      errors.push_back({"error_class",
                        "error_class must be one of transient, throttled, timeout, not_found, "
                        "invalid_input, auth, unknown, uncertain_effect",
                        "invalid"});
    }
  }
  if (const std::string* retrying = query_value(query, "retrying")) {
    // Pending messages that failed or lost a lease before: with another status it matches none.
    if (*retrying != "true" || (out.status && *out.status != Status::pending)) {
      errors.push_back({"retrying", "retrying takes only true, and implies status=pending",
                        "invalid"});
    } else {
      out.retrying = true;
      out.status = Status::pending;
    }
  }
  return errors;
}

FieldErrors decode_attempts(const QueryParams& query, store::HistoryPage& out) {
  FieldErrors errors;
  out.limit = query_integer(query, "limit", "limit", 1, kMaxHistoryPage, errors)
                  .value_or(kMaxHistoryPage);
  out.after = query_integer(query, "after", "after", 0, 999999999999999999LL, errors).value_or(0);
  return errors;
}

FieldErrors decode_versions(const QueryParams& query, VersionsPage& out) {
  FieldErrors errors;
  out.limit = query_integer(query, "limit", "limit", 1, kMaxVersionsPage, errors).value_or(20);
  out.after = query_integer(query, "after", "after", 0, 999999999999999999LL, errors).value_or(0);
  return errors;
}

FieldErrors decode_queues(const QueryParams& query, QueuesQuery& out) {
  FieldErrors errors;
  out.limit = static_cast<int>(query_integer(query, "limit", "limit", 1, 1000, errors).value_or(1000));
  out.after = query_queue(query, "after", errors);
  return errors;
}

FieldErrors decode_purge(const QueryParams& query, PurgeRequest& out) {
  FieldErrors errors;
  const std::string* status = query_value(query, "status");
  auto parsed = status ? parse_status(*status) : std::nullopt;
  if (!status) {
    errors.push_back({"status", "status is required: succeeded, dead or dismissed", "required"});
  } else if (!parsed || *parsed == Status::pending || *parsed == Status::processing) {
    errors.push_back({"status", "only succeeded, dead or dismissed messages can be purged", "invalid"});
  } else {
    out.status = *parsed;
  }
  out.before = query_time(query, "before", errors);
  return errors;
}

FieldErrors decode_audit(const QueryParams& query, store::AuditQuery& out) {
  FieldErrors errors;
  if (const std::string* action = query_value(query, "action")) {
    if (valid_audit_action(*action)) {
      out.action = *action;
    } else {
      std::string names;
      for (auto a : kAuditActions) names += (names.empty() ? "" : ", ") + std::string(a);
      errors.push_back({"action", "action must be one of " + names, "invalid"});
    }
  }
  if (const std::string* actor = query_value(query, "actor")) {
    if (actor->empty() || actor->size() > 128) {
      errors.push_back({"actor", "actor must be 1 to 128 characters", "invalid"});
    } else {
      out.actor = *actor;
    }
  }
  out.queue = query_queue(query, "queue", errors);
  out.since = query_time(query, "since", errors);
  out.until = query_time(query, "until", errors);
  out.limit = static_cast<int>(query_integer(query, "limit", "limit", 1, 100, errors).value_or(20));
  out.before_id = query_integer(query, "after_id", "after_id", 1, 999999999999999999LL, errors);
  return errors;
}

FieldErrors decode_claim(const json::object& body, const QueryParams& query, ClaimRequest& out) {
  FieldErrors errors;
  FieldReader r(body, errors);
  std::optional<long long> wait;
  if (r.get("wait_seconds")) {
    wait = r.integer("wait_seconds", 0, 60);
  } else {
    wait = query_integer(query, "wait", "wait_seconds", 0, 60, errors);
  }
  out.command.wait_ms = wait.value_or(0) * kMillisPerSecond;
  if (auto v = r.integer("visibility_timeout", 1, 43200)) {
    out.command.visibility_ms = *v * kMillisPerSecond;
  }
  out.command.worker = r.string("worker", kMaxWorkerBytes, false);
  out.command.worker_version = r.string("worker_version", kMaxWorkerVersionBytes, false);
  if (const json::value* jt = r.get("job_types")) {
    bool ok = jt->is_array() && jt->get_array().size() <= kMaxJobTypesFilter;
    if (ok) {
      for (const auto& item : jt->get_array()) {
        if (!item.is_string() || item.get_string().empty() ||
            item.get_string().size() > kMaxJobTypeBytes) {
          ok = false;
          break;
        }
        out.command.job_types.emplace_back(item.get_string());
      }
    }
    if (!ok) {
      out.command.job_types.clear();
      r.add("job_types", "job_types must be an array of at most 100 job type names", "invalid");
    }
  }
  if (r.get("max")) {
    out.batch = true;
    out.command.max = static_cast<int>(r.integer("max", 1, 100).value_or(1));
  }
  // Trials go only to claims that name the job types their handlers opted in for (issue 36).
  out.command.trials = r.boolean("trials").value_or(false);
  if (out.command.trials && out.command.job_types.empty()) {
    r.add("trials", "trials: true needs job_types: the job types whose handlers take trial runs",
          "invalid");
  }
  if (const json::value* ack = r.get("ack")) {
    if (const json::array* items = ack->if_array(); items && items->size() <= kMaxBatchItems) {
      out.command.acks.reserve(items->size());
      out.ack = read_ack_items(*items, out.command.acks);
    } else {
      r.add("ack",
            "ack must be an array of at most " + std::to_string(kMaxBatchItems) +
                " {id, lease_id} objects",
            "invalid");
    }
  }
  return errors;
}

FieldErrors decode_succeed(const json::object& body, std::optional<std::string>& lease_id) {
  FieldErrors errors;
  FieldReader r(body, errors);
  lease_id = r.string("lease_id", kMaxLeaseIdBytes, false);
  return errors;
}

FieldErrors decode_fail(const json::object& body, FailInput& out) {
  FieldErrors errors;
  FieldReader r(body, errors);
  // FT72: a missing or non-string error is stored as "unspecified error"; long ones are cut —
  // after NULs became three-byte U+FFFD, so that what is stored keeps to the limit.
  if (const json::value* e = r.get("error"); e && e->is_string()) {
    out.error = truncate_utf8(sanitize_text(e->get_string()), kMaxErrorBytes);
  } else {
    out.error = "unspecified error";
  }
  out.lease_id = r.string("lease_id", kMaxLeaseIdBytes, false);
  if (const json::value* c = r.get("error_class")) {
    std::optional<ErrorClass> cls;
    if (c->is_string()) cls = parse_error_class(c->get_string());
    if (cls) {
      out.error_class = cls;
    } else {
      r.add("error_class",
            "error_class must be one of transient, throttled, timeout, not_found, "
            "invalid_input, auth, unknown, uncertain_effect",
            "invalid");
    }
  }
  out.retryable = r.boolean("retryable");
  out.retry_in_seconds = r.integer("retry_in", 0, 7 * 86400);
  out.stack = r.text("stack", kMaxStackBytes);
  out.cause = r.text("cause", kMaxCauseBytes);
  out.checkpoint = r.string("checkpoint", kMaxCheckpointBytes, false);
  if (const json::value* f = r.get("fingerprint")) {
    std::optional<std::string_view> problem =
        f->is_string() ? worker_fingerprint_error(f->get_string()) : std::string_view("invalid");
    if (!problem) {
      out.fingerprint = std::string(f->get_string());
    } else if (*problem == "too_long") {
      r.add("fingerprint",
            "fingerprint must be at most " + std::to_string(kWorkerFingerprintMaxBytes) + " bytes",
            "too_long");
    } else {
      r.add("fingerprint", "fingerprint must be 1 to 128 of A-Z, a-z, 0-9, _ . : -", "invalid");
    }
  }
  return errors;
}

FieldErrors decode_replay(const json::object& body, const Config& config, ReplayRequest& out) {
  FieldErrors errors;
  FieldReader r(body, errors);
  out.input.reason = r.text("reason", kMaxReasonBytes);
  out.input.payload = r.string("payload", static_cast<std::size_t>(config.limits.max_payload_bytes),
                               false, false);
  out.delay_ms = delay_or_run_at(r, out.input.run_at);
  out.input.force = r.boolean("force").value_or(false);
  out.dry_run = r.boolean("dry_run").value_or(false);
  out.input.payload_is_json = r.boolean("payload_is_json").value_or(true);
  // resolve_effects: {"<key>": "done" | "forget"}; whether each key is a started effect of the
  // message is the transition's to check.
  if (const json::value* v = r.get("resolve_effects")) {
    if (!v->is_object()) {
      r.add("resolve_effects", "resolve_effects must be an object of key: \"done\" | \"forget\"",
            "invalid");
    } else {
      for (const auto& [key, how] : v->get_object()) {
        std::string field = "resolve_effects." + std::string(key);
        if (how.is_string() && (how.get_string() == "done" || how.get_string() == "forget")) {
          out.input.resolve_effects.emplace_back(std::string(key), how.get_string() == "done");
        } else {
          r.add(field, field + " must be \"done\" or \"forget\"", "invalid");
        }
      }
    }
  }
  return errors;
}

FieldErrors decode_extend(const json::object& body, ExtendRequest& out) {
  FieldErrors errors;
  FieldReader r(body, errors);
  out.lease_id = r.string("lease_id", kMaxLeaseIdBytes, true).value_or("");
  if (auto s = r.integer("seconds", 1, 43200)) out.duration_ms = *s * kMillisPerSecond;
  out.checkpoint = r.string("checkpoint", kMaxCheckpointBytes, false);
  return errors;
}

FieldErrors decode_release(const json::object& body, ReleaseRequest& out) {
  FieldErrors errors;
  FieldReader r(body, errors);
  out.lease_id = r.string("lease_id", kMaxLeaseIdBytes, true).value_or("");
  out.delay_ms = r.integer("delay_seconds", 0, kMaxDelaySeconds).value_or(0) * kMillisPerSecond;
  return errors;
}

FieldErrors decode_dismiss(const json::object& body, std::optional<std::string>& reason) {
  FieldErrors errors;
  FieldReader r(body, errors);
  reason = r.text("reason", kMaxReasonBytes);
  return errors;
}

}  // namespace dlq::core
