// The wake-up scheduler: parked long-poll claims, the tokens that keep a wake-up from falling
// between "found nothing" and "parked", the one timer for due retries, lease expiries and the
// once-a-second refresh from the database. All of its state lives on ONE strand (measured:
// docs/architecture.md); the QueueService tells it what changed and asks it to park claims.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "core/waiters.hpp"
#include "model/message.hpp"
#include "store/store.hpp"

namespace dlq::core {

template <class T>
using awaitable = boost::asio::awaitable<T>;

// The messages this node knows will become due, one entry per message, earliest first. Bounded:
// when full, an entry later than all the others is dropped (or the latest gives way to an
// earlier one); the once-a-second refresh from the database finds what was dropped.
class DueEvents {
 public:
  explicit DueEvents(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {}
  // False when the entry was dropped (full, and every entry is due no later).
  bool add(const std::string& queue, TimeMs at);
  std::optional<TimeMs> earliest() const;
  // Removes the entries due by `now` and returns their queues, earliest first.
  std::vector<std::string> take_due(TimeMs now);
  std::size_t size() const { return events_.size(); }

 private:
  std::size_t capacity_;
  std::multimap<TimeMs, std::string> events_;
};

// Ends a parked claim early (its client went away). Strand-confined state.
class ClaimCancel {
 private:
  friend class WakeScheduler;
  bool cancelled = false;
  Waiter* waiter = nullptr;
};

class WakeScheduler {
 public:
  // Takes what a claim may take at the instant the scheduler passes (the clock's now).
  using Attempt = std::function<awaitable<std::vector<Message>>(TimeMs clock_now)>;
  // Applies the lease reaper's transition to everything that expired by `now`; returns the
  // messages as they became.
  using Reap = std::function<awaitable<std::vector<Message>>(TimeMs now)>;

  WakeScheduler(boost::asio::any_io_executor executor, store::Store& store, const Clock& clock,
                Reap reap);

  // Subscribes to other nodes' changes and starts the timer.
  void start();
  // Thread-safe. Wakes every parked claim (they answer empty) and stops the timer.
  void shutdown();
  // Thread-safe. The clock jumped (tests move a ManualClock): re-evaluate the timer now.
  void clock_moved();
  bool stopping() const { return stopping_.load(); }
  std::size_t waiting() const { return waiting_.load(); }
  // Parked claims per queue, read on the strand.
  awaitable<std::map<std::string, std::size_t>> waiting_by_queue();

  // Thread-safe announcements. `count` messages of `queue` are claimable now.
  void ready(const std::string& queue, const std::optional<std::string>& job_type, int count);
  // A message of `queue` becomes claimable at `at`.
  void due(const std::string& queue, TimeMs at);
  // A lease runs out at `expires_at`: the reaper must look then.
  void leased(const std::vector<Message>& claimed);
  // A message changed: ready or due, as its new state says (nothing unless pending).
  void changed(const Message& m, TimeMs now);
  // Thread-safe. A trial of `job_type` went pending in `queue`: the claims that asked for trials
  // of that type look again.
  void trial_ready(const std::string& queue, const std::string& job_type);

  // Runs `attempt` until it takes something, `wait_ms` of real time pass, `cancel` fires or the
  // scheduler shuts down, parking in between. Never misses a wake-up announced meanwhile.
  awaitable<std::vector<Message>> wait_for_work(std::string queue,
                                                std::vector<std::string> job_types,
                                                TimeMs wait_ms, Attempt attempt,
                                                std::shared_ptr<ClaimCancel> cancel,
                                                bool trials = false);
  // Thread-safe: ends the claim holding `cancel` (if still parked) with an empty answer.
  void cancel(std::shared_ptr<ClaimCancel> cancel);

 private:
  awaitable<std::vector<Message>> park_on_strand(std::string queue,
                                                 std::vector<std::string> job_types,
                                                 TimeMs wait_ms, Attempt attempt,
                                                 std::shared_ptr<ClaimCancel> cancel, bool trials);
  awaitable<void> timer_loop();
  awaitable<void> refresh(TimeMs now);

  // Strand-only.
  void on_ready(const std::string& queue, const std::optional<std::string>& job_type, int count);
  void on_due(const std::string& queue, TimeMs at);
  void on_lease(TimeMs expires_at);
  void on_leases(const std::vector<Message>& claimed);
  void rearm();
  void set_next_lease_expiry(std::optional<TimeMs> at);
  TimeMs next_deadline() const;

  // Per queue with claims in flight. An event that makes work claimable wakes a parked waiter;
  // when none is parked it leaves a token instead, which one claim whose query was already
  // under way takes to look again rather than park (one event, at most one extra query).
  struct ClaimState {
    int tokens = 0;
    int active = 0;
  };
  void give_token(ClaimState& state);

  boost::asio::strand<boost::asio::any_io_executor> strand_;
  store::Store& store_;
  const Clock& clock_;
  Reap reap_;

  // Strand-confined state.
  Waiters waiters_;
  std::unordered_map<std::string, ClaimState> claims_;
  DueEvents due_events_;  // what does not fit is found by the refresh (db_next_due_)
  std::optional<TimeMs> db_next_due_;  // earliest due time in the database (any queue)
  std::optional<TimeMs> next_lease_expiry_;
  TimeMs next_refresh_ = 0;
  TimeMs armed_for_ = 0;
  boost::asio::steady_timer timer_;

  std::atomic<bool> stopping_{false};    // written on the strand, read anywhere
  std::atomic<std::size_t> waiting_{0};  // parked claims, for metrics
  // Read anywhere, written on the strand: claims that may wait (any queue), so that ready()
  // posts only when one could use it; next_lease_expiry_ (max when none), so that leased()
  // posts only a lease that runs out earlier.
  std::atomic<int> claiming_{0};
  std::atomic<TimeMs> lease_floor_{std::numeric_limits<TimeMs>::max()};
};

}  // namespace dlq::core
