// Batches of the incident backfill, and the task that runs them on the leader.
#include "core/incident_backfill.hpp"

#include <memory>

#include "model/fingerprint.hpp"
#include "model/logging.hpp"

namespace dlq::core {

using boost::asio::awaitable;

store::PrintedDead print_dead(const store::UnprintedDead& m, const Redactor& redactor) {
  store::PrintedDead out;
  out.id = m.id;
  out.job_type = m.job_type;
  out.queue = m.queue;
  out.dead_at = m.dead_at;
  if (m.dead_reason == DeadReason::lease_expired) {
    out.title = std::string(kLeaseExpiredTitle);
    out.fingerprint = lease_expiry_fingerprint(m.job_type);
    return out;  // a lease expiry's incident has no error class
  }
  if (m.dead_reason == DeadReason::max_receive_count) {
    out.title = m.last_error.value_or("");  // stored as the title (transitions.cpp)
    out.fingerprint = titled_fingerprint(m.job_type, out.title);
    return out;
  }
  out.title = incident_title(redactor.text(m.last_error.value_or("")));
  out.fingerprint =
      computed_fingerprint(m.job_type, m.error_class.value_or(ErrorClass::unknown), out.title,
                           stack_frame(m.stack.value_or("")));
  out.incident_error_class = m.error_class.value_or(ErrorClass::unknown);
  return out;
}

namespace {

// One batch after `after`: read, computed, written; `after` moves past what was read.
awaitable<BackfillProgress> backfill_batch(store::Store& store, const Redactor& redactor,
                                           MessageId& after) {
  BackfillProgress out;
  auto rows = co_await store.incidents_unprinted(after, kBackfillBatch);
  out.read = static_cast<long long>(rows.size());
  out.done = rows.empty();
  if (rows.empty()) co_return out;
  after = rows.back().id;
  std::vector<store::PrintedDead> printed;
  printed.reserve(rows.size());
  for (const auto& m : rows) printed.push_back(print_dead(m, redactor));
  out.written = co_await store.incidents_backfill(std::move(printed));
  co_return out;
}

}  // namespace

awaitable<BackfillProgress> backfill_for(store::Store& store, const Redactor& redactor,
                                         std::chrono::milliseconds budget) {
  const auto end = std::chrono::steady_clock::now() + budget;
  BackfillProgress total;
  MessageId after = 0;
  while (!total.done && std::chrono::steady_clock::now() < end) {
    BackfillProgress step = co_await backfill_batch(store, redactor, after);
    total.read += step.read;
    total.written += step.written;
    total.done = step.done;
  }
  co_return total;
}

TaskSpec incident_backfill_task(store::Store& store, const Redactor& redactor) {
  // Between runs: where the backfill is and what it has done since its last log line.
  struct State {
    MessageId after = 0;
    long long written = 0;
    bool done = false;
    std::chrono::steady_clock::time_point logged = std::chrono::steady_clock::now();
  };
  auto state = std::make_shared<State>();
  TaskSpec spec;
  spec.name = kIncidentBackfillTask;
  spec.scope = TaskScope::leader_only;
  // Once done, a look a minute (a node of the version before may still write dead messages
  // without fingerprints while a cluster is upgraded).
  spec.interval_ms = 60000;
  spec.first_delay_ms = 0;
  spec.body = [&store, &redactor, state](const TaskContext& ctx) -> awaitable<void> {
    if (state->done) {  // start over: anything new has ids above none in particular
      state->after = 0;
      state->done = false;
    }
    const auto slice_end = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (!ctx.stopping() && ctx.leading() && std::chrono::steady_clock::now() < slice_end) {
      BackfillProgress step = co_await backfill_batch(store, redactor, state->after);
      state->written += step.written;
      if (step.done) {
        state->done = true;
        break;
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (state->written > 0 && (state->done || now - state->logged >= std::chrono::seconds(10))) {
      log::info("incident backfill", {{"written", std::to_string(state->written)},
                                      {"after_id", std::to_string(state->after)},
                                      {"done", state->done ? "true" : "false"}});
      state->written = 0;
      state->logged = now;
    }
    if (!state->done) ctx.run_again_in(0);
  };
  return spec;
}

}  // namespace dlq::core
