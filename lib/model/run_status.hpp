// A replay run's status, its text form (as stored in replay_runs.status and shown by GET
// /dlq/replays), and the two rules the core and the store both apply to it: which runs the
// leader drives, and the status a paced step leaves its run in.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace dlq {

enum class RunStatus { scheduled, running, paused, cancelled, done };
std::string_view to_string(RunStatus s);
std::optional<RunStatus> parse_run_status(std::string_view s);

// The live runs: the leader steps them (a scheduled one from its start_at on), an operator may
// pause or cancel them. Paused, cancelled and done runs stand still.
inline constexpr std::array<RunStatus, 2> kLiveRunStatuses{RunStatus::scheduled,
                                                           RunStatus::running};
bool run_live(RunStatus s);

// After a step moved a run's cursor to `next_seq` of its `matched` items: done once none is
// left, running until then.
RunStatus status_after_step(long long next_seq, long long matched);

}  // namespace dlq
