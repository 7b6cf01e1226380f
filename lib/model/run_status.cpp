// Replay run statuses: their names and the rules on them.
#include "model/run_status.hpp"

#include <algorithm>
#include <utility>

namespace dlq {
namespace {

constexpr std::array<std::pair<RunStatus, std::string_view>, 5> kNames{{
    {RunStatus::scheduled, "scheduled"},
    {RunStatus::running, "running"},
    {RunStatus::paused, "paused"},
    {RunStatus::cancelled, "cancelled"},
    {RunStatus::done, "done"},
}};

}  // namespace

std::string_view to_string(RunStatus s) {
  for (const auto& [status, name] : kNames) {
    if (status == s) return name;
  }
  return "unknown";
}

std::optional<RunStatus> parse_run_status(std::string_view s) {
  for (const auto& [status, name] : kNames) {
    if (name == s) return status;
  }
  return std::nullopt;
}

bool run_live(RunStatus s) {
  return std::find(kLiveRunStatuses.begin(), kLiveRunStatuses.end(), s) != kLiveRunStatuses.end();
}

RunStatus status_after_step(long long next_seq, long long matched) {
  return next_seq >= matched ? RunStatus::done : RunStatus::running;
}

}  // namespace dlq
