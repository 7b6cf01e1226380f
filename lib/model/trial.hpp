// A trial run (issue 36): a dead message handed once to a worker that opted in, with the real
// handler and its side effects only noted (`would_effects`), so that an operator sees whether a
// replay would succeed before confirming it. A trial is not an attempt: the message stays as it is.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>

#include "model/message.hpp"
#include "model/time.hpp"

namespace dlq {

enum class TrialStatus { pending, running, succeeded, failed, expired };
std::string_view to_string(TrialStatus s);
std::optional<TrialStatus> parse_trial_status(std::string_view s);
// Pending or running: at most one per message.
inline bool trial_open(TrialStatus s) {
  return s == TrialStatus::pending || s == TrialStatus::running;
}

// A side effect the handler would have caused (its key and description), reported by the
// trial's answer instead of being recorded.
struct WouldEffect {
  std::string key;
  std::optional<std::string> description;
};

struct Trial {
  long long id = 0;
  MessageId message_id = 0;
  std::string queue;
  std::string job_type;
  TrialStatus status = TrialStatus::pending;
  std::optional<std::string> actor;
  std::optional<std::string> reason;
  std::optional<std::string> payload;  // the edited payload; none: the message's own
  TimeMs created_at = 0;
  std::optional<TimeMs> claimed_at;
  std::optional<TimeMs> finished_at;
  std::optional<std::string> lease_id;
  std::optional<TimeMs> lease_expires_at;
  std::optional<std::string> worker;
  std::optional<std::string> worker_version;
  std::optional<std::string> error;
  std::optional<ErrorClass> error_class;
  std::optional<std::string> stack;
  std::optional<std::string> cause;
  std::vector<WouldEffect> would_effects;
};

// `would_effects` as shown, [{"key", "description"}], and as stored (that array's text).
boost::json::array would_effects_array(const std::vector<WouldEffect>& effects);
std::string would_effects_json(const std::vector<WouldEffect>& effects);
std::vector<WouldEffect> parse_would_effects(std::string_view json);

}  // namespace dlq
