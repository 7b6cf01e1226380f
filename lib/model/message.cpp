// Text forms of the message enums, as they appear on the wire and in the database, and the rule
// for queue names.
#include "model/message.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace dlq {
namespace {

template <class E, std::size_t N>
std::optional<E> lookup(const std::array<std::pair<E, std::string_view>, N>& table,
                        std::string_view text) {
  for (const auto& [value, name] : table) {
    if (name == text) return value;
  }
  return std::nullopt;
}

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "unknown";
}

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

constexpr std::array<std::pair<DeadReason, std::string_view>, 4> kDeadReasons{{
    {DeadReason::retries_exhausted, "retries_exhausted"},
    {DeadReason::non_retryable, "non_retryable"},
    {DeadReason::retry_window_exceeded, "retry_window_exceeded"},
    {DeadReason::lease_expired, "lease_expired"},
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

std::string_view to_string(Status s) { return name_of(kStatuses, s); }
std::optional<Status> parse_status(std::string_view s) { return lookup(kStatuses, s); }

std::string_view to_string(ErrorClass c) { return name_of(kErrorClasses, c); }
std::optional<ErrorClass> parse_error_class(std::string_view s) { return lookup(kErrorClasses, s); }

std::string_view to_string(DeadReason r) { return name_of(kDeadReasons, r); }
std::optional<DeadReason> parse_dead_reason(std::string_view s) { return lookup(kDeadReasons, s); }

std::string_view to_string(EffectState s) { return name_of(kEffectStates, s); }
std::optional<EffectState> parse_effect_state(std::string_view s) { return lookup(kEffectStates, s); }

std::string_view to_string(AttemptOutcome o) { return name_of(kOutcomes, o); }
std::optional<AttemptOutcome> parse_attempt_outcome(std::string_view s) {
  return lookup(kOutcomes, s);
}

}  // namespace dlq
