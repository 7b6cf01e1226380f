// The wake-up scheduler: announcements onto the strand, parking claims, and the timer loop.
#include "core/wake_scheduler.hpp"

#include <limits>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "model/error.hpp"
#include "model/logging.hpp"

namespace dlq::core {
namespace asio = boost::asio;
using asio::use_awaitable;
using std::chrono::steady_clock;

namespace {

constexpr TimeMs kRefreshIntervalMs = 1000;
constexpr std::size_t kMaxDueEvents = 100000;

}  // namespace

WakeScheduler::WakeScheduler(asio::any_io_executor executor, store::Store& store,
                             const Clock& clock, Reap reap)
    : strand_(asio::make_strand(executor)),
      store_(store),
      clock_(clock),
      reap_(std::move(reap)),
      due_events_(kMaxDueEvents),
      timer_(strand_) {}

void WakeScheduler::start() {
  // Other nodes' changes (PostgreSQL): wake claimers here as if the change were local.
  store_.subscribe_changes([this](const std::string& queue, TimeMs due) {
    asio::post(strand_, [this, queue, due] {
      if (queue.empty()) {
        for (auto& [name, state] : claims_) give_token(state);
        waiters_.wake_one_per_queue();
      } else if (due <= clock_.now()) {
        on_ready(queue, std::nullopt, 1);
        // It may be a trial another node started (issue 36): those claims look too.
        waiters_.wake_trials(queue, std::nullopt);
      } else {
        on_due(queue, due);
      }
    });
  });
  asio::co_spawn(strand_, timer_loop(), [](std::exception_ptr e) {
    if (e) log::error("scheduler timer ended", {{"error", describe(e)}});
  });
}

void WakeScheduler::shutdown() {
  asio::post(strand_, [this] {
    stopping_ = true;
    waiters_.wake_all();
    timer_.cancel();
  });
}

void WakeScheduler::clock_moved() {
  asio::post(strand_, [this] { timer_.cancel(); });
}

// ---- the due events --------------------------------------------------------------------------

bool DueEvents::add(const std::string& queue, TimeMs at) {
  if (events_.size() >= capacity_) {
    auto last = std::prev(events_.end());
    if (last->first <= at) return false;
    events_.erase(last);
  }
  events_.emplace(at, queue);
  return true;
}

std::optional<TimeMs> DueEvents::earliest() const {
  if (events_.empty()) return std::nullopt;
  return events_.begin()->first;
}

std::vector<std::string> DueEvents::take_due(TimeMs now) {
  std::vector<std::string> due;
  auto end = events_.upper_bound(now);
  for (auto it = events_.begin(); it != end; ++it) due.push_back(std::move(it->second));
  events_.erase(events_.begin(), end);
  return due;
}

// ---- announcements (any thread) -> strand ----------------------------------------------------

// An announcement nobody can use is not posted: the strand belongs to the main I/O thread, and
// every post from another thread would wake it. Both filters are safe because the change was
// committed before the announcement: a claim that starts to wait later sees it in its first
// look, and a lease the scheduler does not hear of is found by the refresh that follows the
// reaping of an earlier one.
void WakeScheduler::ready(const std::string& queue, const std::optional<std::string>& job_type,
                          int count) {
  if (claiming_.load() == 0) return;
  asio::post(strand_, [this, queue, job_type, count] { on_ready(queue, job_type, count); });
}

void WakeScheduler::due(const std::string& queue, TimeMs at) {
  asio::post(strand_, [this, queue, at] { on_due(queue, at); });
}

void WakeScheduler::leased(const std::vector<Message>& claimed) {
  std::optional<TimeMs> earliest;
  for (const auto& m : claimed) {
    if (m.lease_expires_at && (!earliest || *m.lease_expires_at < *earliest)) {
      earliest = m.lease_expires_at;
    }
  }
  if (earliest && *earliest < lease_floor_.load()) {
    asio::post(strand_, [this, at = *earliest] { on_lease(at); });
  }
}

void WakeScheduler::trial_ready(const std::string& queue, const std::string& job_type) {
  asio::post(strand_, [this, queue, job_type] {
    waiters_.wake_trials(queue, job_type);
    // A trials claim whose look was already under way looks again instead of parking.
    if (auto it = claims_.find(queue); it != claims_.end()) give_token(it->second);
  });
}

void WakeScheduler::changed(const Message& m, TimeMs now) {
  if (m.status != Status::pending) return;
  if (m.retry_after && *m.retry_after > now) {
    due(m.queue, *m.retry_after);
  } else {
    ready(m.queue, m.job_type, 1);
  }
}

awaitable<std::map<std::string, std::size_t>> WakeScheduler::waiting_by_queue() {
  auto read = [this]() -> awaitable<std::map<std::string, std::size_t>> { co_return waiters_.counts(); };
  co_return co_await asio::co_spawn(strand_, read(), use_awaitable);
}

void WakeScheduler::cancel(std::shared_ptr<ClaimCancel> cancel) {
  asio::post(strand_, [cancel = std::move(cancel)] {
    cancel->cancelled = true;
    if (cancel->waiter) cancel->waiter->timer.cancel();
  });
}

// ---- strand-only state changes ---------------------------------------------------------------

void WakeScheduler::give_token(ClaimState& state) {
  state.tokens = std::min(state.tokens + 1, state.active);
}

void WakeScheduler::on_ready(const std::string& queue, const std::optional<std::string>& job_type,
                             int count) {
  auto it = claims_.find(queue);
  for (int i = 0; i < count; ++i) {
    if (waiters_.wake_one(queue, job_type)) continue;
    if (it == claims_.end()) break;  // nobody is claiming this queue right now
    give_token(it->second);
  }
}

void WakeScheduler::on_due(const std::string& queue, TimeMs at) {
  if (due_events_.add(queue, at)) rearm();
}

void WakeScheduler::on_lease(TimeMs expires_at) {
  if (!next_lease_expiry_ || expires_at < *next_lease_expiry_) {
    set_next_lease_expiry(expires_at);
    rearm();
  }
}

void WakeScheduler::on_leases(const std::vector<Message>& claimed) {
  for (const auto& m : claimed) {
    if (m.lease_expires_at) on_lease(*m.lease_expires_at);
  }
}

void WakeScheduler::set_next_lease_expiry(std::optional<TimeMs> at) {
  next_lease_expiry_ = at;
  lease_floor_ = at.value_or(std::numeric_limits<TimeMs>::max());
}

TimeMs WakeScheduler::next_deadline() const {
  TimeMs next = next_refresh_;
  if (next_lease_expiry_) next = std::min(next, *next_lease_expiry_);
  if (db_next_due_) next = std::min(next, *db_next_due_);
  if (auto due = due_events_.earliest()) next = std::min(next, *due);
  return next;
}

void WakeScheduler::rearm() {
  // The timer loop recomputes its deadline whenever it wakes; wake it if it sleeps too long.
  if (next_deadline() < armed_for_) timer_.cancel();
}

// ---- parking claims --------------------------------------------------------------------------

awaitable<std::vector<Message>> WakeScheduler::wait_for_work(std::string queue,
                                                             std::vector<std::string> job_types,
                                                             TimeMs wait_ms, Attempt attempt,
                                                             std::shared_ptr<ClaimCancel> cancel,
                                                             bool trials) {
  co_return co_await asio::co_spawn(
      strand_,
      park_on_strand(std::move(queue), std::move(job_types), wait_ms, std::move(attempt),
                     std::move(cancel), trials),
      use_awaitable);
}

// Runs on the strand, so that checking for work and parking cannot miss a wake-up: an event that
// makes work claimable while no waiter is parked leaves a token, and a claim whose query found
// nothing takes a token (and looks again) before it parks.
awaitable<std::vector<Message>> WakeScheduler::park_on_strand(std::string queue,
                                                              std::vector<std::string> job_types,
                                                              TimeMs wait_ms, Attempt attempt,
                                                              std::shared_ptr<ClaimCancel> cancel,
                                                              bool trials) {
  const auto deadline = steady_clock::now() + std::chrono::milliseconds(wait_ms);

  // Leaves no waiter and no claim state behind, however the claim ends (answer, timeout,
  // cancel, store fault).
  struct Parking {
    WakeScheduler& scheduler;
    const std::string& queue;
    std::shared_ptr<ClaimCancel>& cancel;
    std::unique_ptr<Waiter> waiter;
    bool claimed = false;
    ~Parking() {
      if (waiter) {
        --scheduler.waiting_;
        scheduler.waiters_.remove(queue, waiter.get());
        if (cancel) cancel->waiter = nullptr;
        // A wake-up meant for this waiter, or more work after what it took, goes to the next.
        if ((waiter->woken || claimed) && !scheduler.stopping_) {
          scheduler.waiters_.wake_one(queue, std::nullopt);
        }
      }
      auto it = scheduler.claims_.find(queue);
      if (it != scheduler.claims_.end() && --it->second.active == 0) scheduler.claims_.erase(it);
      --scheduler.claiming_;
    }
  } parking{*this, queue, cancel, nullptr};
  ++claims_[queue].active;
  ++claiming_;  // before the first look: an announcement from now on is posted

  std::vector<Message> claimed;
  for (;;) {
    if (stopping_ || (cancel && cancel->cancelled)) break;
    claimed = co_await attempt(clock_.now());
    if (!claimed.empty()) {
      on_leases(claimed);
      parking.claimed = true;
      break;
    }
    if (steady_clock::now() >= deadline) break;
    if (ClaimState& state = claims_[queue]; state.tokens > 0) {
      --state.tokens;
      continue;
    }
    if (!parking.waiter) {
      parking.waiter = std::make_unique<Waiter>(strand_);
      parking.waiter->job_types = job_types;
      parking.waiter->trials = trials;
      waiters_.park(queue, parking.waiter.get());
      if (cancel) cancel->waiter = parking.waiter.get();
      ++waiting_;
    }
    // A cancel that came while the attempt ran found no waiter to stop: it is only a flag.
    if (cancel && cancel->cancelled) break;
    parking.waiter->woken = false;
    parking.waiter->timer.expires_at(deadline);
    co_await parking.waiter->timer.async_wait(asio::as_tuple(use_awaitable));
  }
  co_return claimed;
}

// ---- the timer -------------------------------------------------------------------------------

// One timer for everything time-driven: due retries, expired leases and the once-a-second
// refresh of the schedule from the database (the safety net for changes made elsewhere).
awaitable<void> WakeScheduler::timer_loop() {
  while (!stopping_) {
    try {
      TimeMs now = clock_.now();
      bool refresh_now = false;
      if (next_lease_expiry_ && *next_lease_expiry_ <= now) {
        set_next_lease_expiry(std::nullopt);
        auto reaped = co_await reap_(now);
        for (const auto& m : reaped) {
          // Due after its backoff, or at once (an SQS queue's expiry: no backoff).
          if (m.status == Status::pending) on_due(m.queue, m.retry_after.value_or(now));
        }
        refresh_now = true;
      }
      // Each message that became due wakes one claimer of its queue.
      const std::vector<std::string> due = due_events_.take_due(now);
      for (const auto& queue : due) on_ready(queue, std::nullopt, 1);
      if (db_next_due_ && *db_next_due_ <= now) {
        db_next_due_.reset();
        for (auto& [queue, state] : claims_) give_token(state);
        waiters_.wake_one_per_queue();
        refresh_now = true;
      }
      if (now >= next_refresh_) {
        next_refresh_ = now + kRefreshIntervalMs;
        refresh_now = true;
      }
      if (refresh_now) co_await refresh(now);
    } catch (const std::exception& e) {
      log::warn("timer work failed; retrying", {{"error", e.what()}});
    }
    if (stopping_) break;

    TimeMs now = clock_.now();
    armed_for_ = next_deadline();
    timer_.expires_after(std::chrono::milliseconds(std::max<TimeMs>(0, armed_for_ - now)));
    co_await timer_.async_wait(asio::as_tuple(use_awaitable));
  }
}

awaitable<void> WakeScheduler::refresh(TimeMs now) {
  auto schedule = co_await store_.schedule_peek(now);
  db_next_due_ = schedule.next_due;
  if (schedule.next_lease_expiry &&
      (!next_lease_expiry_ || *schedule.next_lease_expiry < *next_lease_expiry_)) {
    set_next_lease_expiry(schedule.next_lease_expiry);
  }
}

}  // namespace dlq::core
