// Text forms of the message enums, as they appear on the wire and in the database, and the rule
// for queue names.
#include "model/message.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "model/enum_names.hpp"

namespace dlq {
namespace {

constexpr std::array<std::pair<Status, std::string_view>, 5> kStatuses{{
    {Status::pending, "pending"},
    {Status::processing, "processing"},
    {Status::succeeded, "succeeded"},
    {Status::dead, "dead"},
    {Status::dismissed, "dismissed"},
}};

constexpr std::array<std::pair<ErrorClass, std::string_view>, 8> kErrorClasses{{
    {ErrorClass::transient, "transient"},
    {ErrorClass::throttled, "throttled"},
    {ErrorClass::timeout, "timeout"},
    {ErrorClass::not_found, "not_found"},
    {ErrorClass::invalid_input, "invalid_input"},
    {ErrorClass::auth, "auth"},
    {ErrorClass::unknown, "unknown"},
    {ErrorClass::uncertain_effect, "uncertain_effect"},
}};

constexpr std::array<std::pair<DeadReason, std::string_view>, 5> kDeadReasons{{
    {DeadReason::retries_exhausted, "retries_exhausted"},
    {DeadReason::non_retryable, "non_retryable"},
    {DeadReason::retry_window_exceeded, "retry_window_exceeded"},
    {DeadReason::lease_expired, "lease_expired"},
    {DeadReason::max_receive_count, "max_receive_count"},
}};

constexpr std::array<std::pair<AttemptOutcome, std::string_view>, 7> kOutcomes{{
    {AttemptOutcome::succeeded, "succeeded"},
    {AttemptOutcome::failed, "failed"},
    {AttemptOutcome::lease_expired, "lease_expired"},
    {AttemptOutcome::released, "released"},
    {AttemptOutcome::replayed, "replayed"},
    {AttemptOutcome::dismissed, "dismissed"},
    {AttemptOutcome::trial, "trial"},
}};

constexpr std::array<std::pair<EffectState, std::string_view>, 2> kEffectStates{{
    {EffectState::started, "started"},
    {EffectState::done, "done"},
}};

}  // namespace

bool valid_queue_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-';
  });
}

std::string_view to_string(Status s) { return enum_name(kStatuses, s); }
std::optional<Status> parse_status(std::string_view s) { return enum_from_name(kStatuses, s); }

std::string_view to_string(ErrorClass c) { return enum_name(kErrorClasses, c); }
std::optional<ErrorClass> parse_error_class(std::string_view s) {
  return enum_from_name(kErrorClasses, s);
}

std::string_view to_string(DeadReason r) { return enum_name(kDeadReasons, r); }
std::optional<DeadReason> parse_dead_reason(std::string_view s) {
  return enum_from_name(kDeadReasons, s);
}

std::string_view to_string(EffectState s) { return enum_name(kEffectStates, s); }
std::optional<EffectState> parse_effect_state(std::string_view s) {
  return enum_from_name(kEffectStates, s);
}

std::string_view to_string(AttemptOutcome o) { return enum_name(kOutcomes, o); }
std::optional<AttemptOutcome> parse_attempt_outcome(std::string_view s) {
  return enum_from_name(kOutcomes, s);
}

}  // namespace dlq
