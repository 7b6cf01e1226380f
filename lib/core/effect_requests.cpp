// Requests of recorded side effects and trial runs (issue 36): the effects route, a trial's
// start (one message, or up to ten by id) and a worker's answers with their would-effects.
#include "core/effect_requests.hpp"

#include <boost/json/value.hpp>

#include "core/field_reader.hpp"

namespace dlq::core {
namespace json = boost::json;

namespace {

constexpr std::size_t kMaxEffectKeyBytes = 128;
constexpr std::size_t kMaxEffectDescriptionBytes = 512;
constexpr std::size_t kMaxEffectResultBytes = 4096;
constexpr std::size_t kMaxTrialIds = 10;

}  // namespace

FieldErrors decode_effect(const json::object& body, EffectInput& out) {
  FieldErrors errors;
  FieldReader r(body, errors);
  out.lease_id = r.string("lease_id", kMaxLeaseIdBytes, true).value_or("");
  out.key = r.string("key", kMaxEffectKeyBytes, true, false).value_or("");
  if (auto state = r.string("state", kMaxReasonBytes, true)) {  // any long text: invalid below
    if (*state == "started") {
      out.state = EffectCommand::started;
    } else if (*state == "done") {
      out.state = EffectCommand::done;
    } else if (*state == "cleared") {
      out.state = EffectCommand::cleared;
    } else {
      r.add("state", "state must be started, done or cleared", "invalid");
    }
  }
  // null is the same as absent for the two optional members (a library's "no result").
  auto given = [&r](std::string_view key) { return r.get(key) && !r.get(key)->is_null(); };
  if (given("description")) out.description = r.text("description", kMaxEffectDescriptionBytes);
  if (given("result")) out.result = r.string("result", kMaxEffectResultBytes, false);
  return errors;
}

namespace {

// would_effects: at most `max` {"key" (1..128 bytes), "description" (at most 512)} objects.
std::vector<WouldEffect> read_would_effects(FieldReader& r, int max) {
  std::vector<WouldEffect> out;
  const json::value* v = r.get("would_effects");
  if (!v || v->is_null()) return out;
  const json::array* items = v->if_array();
  if (!items || items->size() > static_cast<std::size_t>(max)) {
    r.add("would_effects",
          "would_effects must be an array of at most " + std::to_string(max) +
              " {key, description} objects",
          "invalid");
    return out;
  }
  for (std::size_t i = 0; i < items->size(); ++i) {
    const std::string prefix = "would_effects[" + std::to_string(i) + "].";
    if (!(*items)[i].is_object()) {
      r.add("would_effects[" + std::to_string(i) + "]", "each would effect must be an object",
            "invalid");
      continue;
    }
    FieldErrors errors;
    FieldReader item((*items)[i].get_object(), errors);
    WouldEffect e;
    e.key = item.string("key", kMaxEffectKeyBytes, true, false).value_or("");
    if (item.get("description") && !item.get("description")->is_null()) {
      e.description = item.text("description", kMaxEffectDescriptionBytes);
    }
    for (auto& err : errors) r.add(prefix + err.field, std::move(err.message), std::move(err.code));
    if (errors.empty()) out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

FieldErrors decode_trial_start(const json::object& body, const Config& config,
                               TrialStartInput& out) {
  FieldErrors errors;
  FieldReader r(body, errors);
  out.reason = r.text("reason", kMaxReasonBytes);
  out.payload = r.string("payload", static_cast<std::size_t>(config.limits.max_payload_bytes),
                         false, false);
  out.payload_is_json = r.boolean("payload_is_json").value_or(true);
  return errors;
}

FieldErrors decode_trial_batch(const json::object& body, std::vector<MessageId>& ids,
                               std::optional<std::string>& reason) {
  FieldErrors errors;
  FieldReader r(body, errors);
  const json::value* v = r.get("ids");
  if (!v) {
    r.add("ids", "ids is required: 1 to 10 message ids", "required");
  } else if (!v->is_array() || v->get_array().empty() || v->get_array().size() > kMaxTrialIds) {
    r.add("ids", "ids must be an array of 1 to 10 message ids", "invalid");
  } else {
    const auto& items = v->get_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (items[i].is_int64() && items[i].get_int64() > 0) {
        ids.push_back(items[i].get_int64());
      } else {
        r.add("ids[" + std::to_string(i) + "]", "a message id is a positive integer", "invalid");
      }
    }
  }
  reason = r.text("reason", kMaxReasonBytes);
  return errors;
}

FieldErrors decode_trial_answer(const json::object& body, const Config& config,
                                TrialAnswer& out) {
  const bool fail = out.kind == TrialAnswer::Kind::fail;
  FieldErrors errors = fail ? decode_fail(body, out.failure) : FieldErrors{};
  FieldReader r(body, errors);
  // The trial's lease is required on every answer (a fail's is optional on a message).
  auto lease = fail ? out.failure.lease_id : r.string("lease_id", kMaxLeaseIdBytes, true);
  if (fail && !lease && !r.get("lease_id")) r.add("lease_id", "lease_id is required", "required");
  out.lease_id = lease.value_or("");
  out.would_effects = read_would_effects(r, config.limits.max_effects_per_message);
  return errors;
}

}  // namespace dlq::core
