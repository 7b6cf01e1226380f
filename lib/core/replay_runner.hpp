// The leader-only task that drives batch replay runs: it replays each run's fixed ids in paced
// steps (rate_per_second, from the run's start), each step one transaction that re-checks every
// message is still dead and moves the run's cursor with a condition, so a second leader's step
// is a no-op and a message is replayed at most once per run. A new leader picks up where the
// database says the run stands.
#pragma once

#include "config/config.hpp"
#include "core/queue_service.hpp"
#include "core/task_host.hpp"
#include "store/store.hpp"

namespace dlq::core {

inline constexpr const char* kReplayRunnerTask = "replay-runs";

// How many items a run may replay now: its pacing allowance (0 when it must wait).
long long replay_allowance(const store::ReplayRun& run, TimeMs now);
// When the next item of a run whose allowance is used up becomes due.
TimeMs replay_next_due(const store::ReplayRun& run);

TaskSpec replay_runner_task(store::Store& store, QueueService& service);

}  // namespace dlq::core
