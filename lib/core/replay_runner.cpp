// Driving replay runs: pacing, steps, and telling claimers what became pending.
#include "core/replay_runner.hpp"

#include <algorithm>
#include <cmath>

#include "core/transitions.hpp"
#include "model/logging.hpp"

namespace dlq::core {

namespace {

constexpr long long kMaxReplaysPerStep = 100;
constexpr long long kMaxItemsPerStep = 500;
constexpr TimeMs kIdleIntervalMs = 1000;
// Steps of a fast run come at most this often, each with what its pacing released meanwhile: a
// transaction per message at 500/s would cost the single SQLite writer more than the replays.
constexpr TimeMs kStepIntervalMs = 100;

}  // namespace

long long replay_allowance(const store::ReplayRun& run, TimeMs now) {
  if (now < run.paced_from) return 0;
  // The first item goes at paced_from, then one every 1/rate seconds.
  double elapsed = static_cast<double>(now - run.paced_from) / 1000.0;
  auto released = static_cast<long long>(std::floor(elapsed * run.rate_per_second)) + 1;
  return std::max<long long>(0, released - run.paced_count);
}

TimeMs replay_next_due(const store::ReplayRun& run) {
  double seconds = static_cast<double>(run.paced_count) / run.rate_per_second;
  return run.paced_from + static_cast<TimeMs>(std::ceil(seconds * 1000.0));
}

TaskSpec replay_runner_task(store::Store& store, QueueService& service) {
  TaskSpec spec;
  spec.name = kReplayRunnerTask;
  spec.scope = TaskScope::leader_only;
  spec.interval_ms = kIdleIntervalMs;
  spec.body = [&store, &service](const TaskContext& ctx) -> boost::asio::awaitable<void> {
    store::RunListParams active;
    active.active_only = true;
    active.limit = 1000;
    auto runs = co_await store.replay_runs_list(active);
    std::optional<TimeMs> next_wake;
    auto wake_at = [&next_wake](TimeMs at) { next_wake = next_wake ? std::min(*next_wake, at) : at; };
    for (auto& run : runs) {
      if (!ctx.leading() || ctx.stopping()) co_return;
      TimeMs now = ctx.now();
      if (run.start_at > now) {
        wake_at(run.start_at);
        continue;
      }
      long long allowance = std::min(replay_allowance(run, now), kMaxReplaysPerStep);
      if (allowance == 0) {
        wake_at(replay_next_due(run));
        continue;
      }
      store::RunStepParams step;
      step.run_id = run.id;
      step.expected_next_seq = run.next_seq;
      step.max_replays = allowance;
      step.max_items = kMaxItemsPerStep;
      step.now = now;
      // A message at its max_replays is skipped (item outcome `max_replays`): a run never forces.
      step.decide = [actor = run.actor, reason = run.reason, id = run.id, now, &service](
                        const Message& m, const store::Related& r) {
        ReplayInput in;
        in.actor = actor;
        in.reason = reason;
        in.replay_id = id;
        in.max_replays = service.config().max_replays_for(m.queue, m.job_type);
        return replay(m, r, in, now);
      };
      auto done = co_await store.replay_run_step(std::move(step));
      if (done.fenced) continue;  // another leader moved it on, or it was paused meanwhile
      for (const auto& m : done.replayed) {
        service.after_change(m, now);
        service.publish(EventKind::replayed, m, now, run.actor, ReplayMode::batch);
      }
      if (done.run.status == RunStatus::done) {
        log::info("replay run done", {{"replay_id", std::to_string(run.id)},
                                      {"replayed", std::to_string(done.run.replayed)},
                                      {"skipped", std::to_string(done.run.skipped)}});
        continue;
      }
      wake_at(std::max(replay_next_due(done.run), now + kStepIntervalMs));
    }
    if (next_wake) ctx.run_again_in(std::max<TimeMs>(0, *next_wake - ctx.now()));
  };
  return spec;
}

}  // namespace dlq::core
