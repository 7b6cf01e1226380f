// Replay run statuses: their names and the rules on them.
#include "model/run_status.hpp"

#include <algorithm>
#include <utility>

#include "model/enum_names.hpp"

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

std::string_view to_string(RunStatus s) { return enum_name(kNames, s); }

std::optional<RunStatus> parse_run_status(std::string_view s) { return enum_from_name(kNames, s); }

bool run_live(RunStatus s) {
  return std::find(kLiveRunStatuses.begin(), kLiveRunStatuses.end(), s) != kLiveRunStatuses.end();
}

RunStatus status_after_step(long long next_seq, long long matched) {
  return next_seq >= matched ? RunStatus::done : RunStatus::running;
}

}  // namespace dlq
