// QueueService: the queue as the HTTP layer sees it. It owns what must be shared between
// requests — parked long-poll claimers, the due-time/lease timer, the schedule it arms — on ONE
// strand, and runs each operation's transition atomically in the store. It knows no HTTP and no
// SQL. Time comes in as an argument (`now`, from X-Now or the clock); timers use the real clock.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "config/config.hpp"
#include "core/redaction.hpp"
#include "core/transitions.hpp"
#include "core/waiters.hpp"
#include "model/time.hpp"
#include "store/store.hpp"

namespace dlq::core {

template <class T>
using awaitable = boost::asio::awaitable<T>;

struct ClaimCommand {
  std::string queue;
  int max = 1;
  TimeMs wait_ms = 0;
  std::optional<TimeMs> visibility_ms;  // default: the queue's policy
  std::optional<std::string> worker;
  std::vector<std::string> job_types;
  // The request pinned "now" (X-Now): attempts after a wake-up run at that instant plus the
  // time since. Otherwise every attempt reads the clock.
  bool pinned_now = false;
};

// Lets the HTTP layer end a parked claim whose client went away. Strand-confined state.
class ClaimCancel {
 private:
  friend class QueueService;
  bool cancelled = false;
  Waiter* waiter = nullptr;
};

class QueueService {
 public:
  QueueService(boost::asio::any_io_executor executor, store::Store& store, const Config& config,
               const Clock& clock, UnitRandom random = default_unit_random());
  ~QueueService();

  // Starts the timer loop (due times, lease reaper, once-a-second schedule refresh).
  void start();
  // Thread-safe. Wakes every parked claimer (they answer empty) and stops the timers.
  void shutdown();
  // Thread-safe. The clock jumped (tests move a ManualClock): re-evaluate the timers now.
  void clock_moved();

  awaitable<std::vector<store::Inserted>> enqueue(std::string queue,
                                                  std::vector<store::NewMessage> messages,
                                                  TimeMs now);
  awaitable<std::vector<Message>> list(store::ListParams params);
  awaitable<Result<Message>> find(std::string queue, MessageId id);
  awaitable<std::vector<Message>> claim(ClaimCommand cmd, TimeMs now,
                                        std::shared_ptr<ClaimCancel> cancel = nullptr);
  // Thread-safe: ends the claim holding `cancel` (if still parked) with an empty answer.
  void cancel_claim(std::shared_ptr<ClaimCancel> cancel);

  awaitable<Result<Message>> succeed(std::string queue, MessageId id,
                                     std::optional<std::string> lease_id, TimeMs now);
  awaitable<Result<Message>> fail(std::string queue, MessageId id, FailInput in, TimeMs now);
  awaitable<Result<Message>> replay(std::string queue, MessageId id, ReplayInput in, TimeMs now,
                                    bool dry_run = false);
  // Batch ack: each item succeeds or fails on its own.
  struct AckItem {
    MessageId id = 0;
    std::optional<std::string> lease_id;
  };
  awaitable<std::vector<Result<Message>>> succeed_many(std::string queue, std::vector<AckItem> items,
                                                       TimeMs now);
  awaitable<Result<Message>> extend(std::string queue, MessageId id, std::string lease_id,
                                    std::optional<TimeMs> duration_ms,
                                    std::optional<std::string> checkpoint, TimeMs now);
  awaitable<Result<Message>> release(std::string queue, MessageId id, std::string lease_id,
                                     TimeMs delay_ms, TimeMs now);
  awaitable<Result<Message>> dismiss(std::string queue, MessageId id,
                                     std::optional<std::string> reason,
                                     std::optional<std::string> actor, TimeMs now);
  awaitable<Result<std::vector<AttemptRecord>>> attempts(std::string queue, MessageId id);
  awaitable<std::vector<store::QueueStats>> stats(std::optional<std::string> queue, TimeMs now);
  awaitable<bool> ready();

  const Config& config() const { return config_; }
  std::size_t waiting_claimers() const { return waiting_.load(); }
  store::WriteStats write_stats() const { return store_.write_stats(); }
  const Redactor& redactor() const { return redactor_; }
  const Clock& clock() const { return clock_; }

 private:
  awaitable<std::vector<Message>> claim_on_strand(ClaimCommand cmd, TimeMs now,
                                                  std::shared_ptr<ClaimCancel> cancel);
  awaitable<void> timer_loop();
  awaitable<void> reap(TimeMs now);
  awaitable<void> refresh_schedule(TimeMs now);
  awaitable<Result<Message>> update(std::string queue, MessageId id, store::Decide decide,
                                    bool load_key_holders = false);

  // Posts to the strand: messages of `queue` are claimable now / will be at `at`.
  void announce_ready(const std::string& queue, const std::optional<std::string>& job_type,
                      int count);
  void announce_due(const std::string& queue, TimeMs at);
  // Strand-only versions.
  void on_ready(const std::string& queue, const std::optional<std::string>& job_type, int count);
  void on_due(const std::string& queue, TimeMs at);
  void on_lease(TimeMs expires_at);
  void rearm();
  // After a message changed: wake claimers or arm the due timer, as the new state asks.
  void announce_change(const Message& m, TimeMs now);

  boost::asio::strand<boost::asio::any_io_executor> strand_;
  store::Store& store_;
  const Config& config_;
  const Clock& clock_;
  UnitRandom random_;
  Redactor redactor_;

  // Strand-confined state.
  Waiters waiters_;
  // Per queue with claims in flight. An event that makes work claimable wakes a parked waiter;
  // when none is parked it leaves a token instead, which one claim whose query was already
  // under way takes to look again rather than park (one event, at most one extra query).
  struct ClaimState {
    int tokens = 0;
    int active = 0;
  };
  void give_token(ClaimState& state);
  std::unordered_map<std::string, ClaimState> claims_;
  // Messages this node knows will become due: one entry per message, earliest first. Bounded;
  // what does not fit is found by the once-a-second schedule refresh (db_next_due_).
  std::multimap<TimeMs, std::string> due_events_;
  std::optional<TimeMs> db_next_due_;           // earliest due time in the database (any queue)
  std::optional<TimeMs> next_lease_expiry_;
  TimeMs next_maintenance_ = 0;
  TimeMs armed_for_ = 0;
  std::atomic<bool> stopping_{false};  // written on the strand, read anywhere
  std::atomic<std::size_t> waiting_{0};  // parked claimers, for metrics
  // Kernel randomness fetched in blocks (one getrandom call per 256 leases).
  std::mutex random_mu_;
  std::vector<unsigned char> random_pool_;
  std::size_t random_used_ = 0;
  std::string lease_token();
  store::ClaimParams claim_params(const ClaimCommand& cmd, TimeMs at);
  void note_leases(const std::vector<Message>& claimed);
  bool timer_running_ = false;
  boost::asio::steady_timer wake_timer_;
};

}  // namespace dlq::core
