// QueueService: operations, the strand-confined waiter/timer state, and the timer loop.
#include "core/queue_service.hpp"

#include <sys/random.h>

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "model/logging.hpp"

namespace dlq::core {
namespace asio = boost::asio;
using asio::use_awaitable;
using std::chrono::steady_clock;

namespace {

constexpr TimeMs kMaintenanceIntervalMs = 1000;
constexpr int kReapBatch = 100;
constexpr std::size_t kMaxDueEvents = 100000;

void fill_random(unsigned char* out, std::size_t bytes) {
  std::size_t got = 0;
  while (got < bytes) {
    ssize_t n = getrandom(out + got, bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("getrandom failed");
    }
    got += static_cast<std::size_t>(n);
  }
}

constexpr std::size_t kLeaseTokenBytes = 16;  // 128 unguessable bits
constexpr std::size_t kRandomPoolBytes = 4096;

}  // namespace

QueueService::QueueService(asio::any_io_executor executor, store::Store& store,
                           const Config& config, const Clock& clock, UnitRandom random)
    : strand_(asio::make_strand(executor)),
      store_(store),
      config_(config),
      clock_(clock),
      random_(std::move(random)),
      redactor_(config.redaction.fields),
      wake_timer_(strand_) {}

QueueService::~QueueService() = default;

// The secret part of every lease_id: 128 bits from the kernel's CSPRNG, as hex. Fetched in
// blocks so a claim costs no system call; each byte is handed out once.
std::string QueueService::lease_token() {
  std::lock_guard lock(random_mu_);
  if (random_pool_.size() != kRandomPoolBytes || random_used_ + kLeaseTokenBytes > kRandomPoolBytes) {
    random_pool_.resize(kRandomPoolBytes);
    fill_random(random_pool_.data(), random_pool_.size());
    random_used_ = 0;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(kLeaseTokenBytes * 2);
  for (std::size_t i = 0; i < kLeaseTokenBytes; ++i) {
    unsigned char b = random_pool_[random_used_ + i];
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  // Forget the bytes once used.
  std::fill_n(random_pool_.begin() + static_cast<std::ptrdiff_t>(random_used_), kLeaseTokenBytes, 0);
  random_used_ += kLeaseTokenBytes;
  return out;
}

void QueueService::start() {
  // Other nodes' changes (PostgreSQL): wake claimers here as if the change were local.
  store_.subscribe_changes([this](const std::string& queue, TimeMs due) {
    asio::post(strand_, [this, queue, due] {
      if (queue.empty()) {
        for (auto& [name, state] : claims_) give_token(state);
        waiters_.wake_one_per_queue();
      } else if (due <= clock_.now()) {
        on_ready(queue, std::nullopt, 1);
      } else {
        on_due(queue, due);
      }
    });
  });
  asio::co_spawn(strand_, timer_loop(), [](std::exception_ptr e) {
    if (e) log::error("timer loop ended", {{"error", describe(e)}});
  });
}

void QueueService::shutdown() {
  asio::post(strand_, [this] {
    stopping_ = true;
    waiters_.wake_all();
    wake_timer_.cancel();
  });
}

void QueueService::clock_moved() {
  asio::post(strand_, [this] { wake_timer_.cancel(); });
}

// ---- announcements (any thread) -> strand ----------------------------------------------------

void QueueService::announce_ready(const std::string& queue,
                                  const std::optional<std::string>& job_type, int count) {
  asio::post(strand_, [this, queue, job_type, count] { on_ready(queue, job_type, count); });
}

void QueueService::announce_due(const std::string& queue, TimeMs at) {
  asio::post(strand_, [this, queue, at] { on_due(queue, at); });
}

void QueueService::announce_change(const Message& m, TimeMs now) {
  if (m.status != Status::pending) return;
  if (m.retry_after && *m.retry_after > now) {
    announce_due(m.queue, *m.retry_after);
  } else {
    announce_ready(m.queue, m.job_type, 1);
  }
}

void QueueService::give_token(ClaimState& state) {
  state.tokens = std::min(state.tokens + 1, state.active);
}

void QueueService::on_ready(const std::string& queue, const std::optional<std::string>& job_type,
                            int count) {
  auto it = claims_.find(queue);
  for (int i = 0; i < count; ++i) {
    if (waiters_.wake_one(queue, job_type)) continue;
    if (it == claims_.end()) break;  // nobody is claiming this queue right now
    give_token(it->second);
  }
}

void QueueService::on_due(const std::string& queue, TimeMs at) {
  if (due_events_.size() >= kMaxDueEvents) {
    auto last = std::prev(due_events_.end());
    if (last->first <= at) return;  // the refresh from the database will find it
    due_events_.erase(last);
  }
  due_events_.emplace(at, queue);
  rearm();
}

void QueueService::on_lease(TimeMs expires_at) {
  if (!next_lease_expiry_ || expires_at < *next_lease_expiry_) {
    next_lease_expiry_ = expires_at;
    rearm();
  }
}

void QueueService::rearm() {
  // The timer loop recomputes its deadline whenever it wakes; wake it if it sleeps too long.
  TimeMs next = next_maintenance_;
  if (next_lease_expiry_) next = std::min(next, *next_lease_expiry_);
  if (db_next_due_) next = std::min(next, *db_next_due_);
  if (!due_events_.empty()) next = std::min(next, due_events_.begin()->first);
  if (next < armed_for_) wake_timer_.cancel();
}

// ---- operations ------------------------------------------------------------------------------

awaitable<std::vector<store::Inserted>> QueueService::enqueue(std::string queue,
                                                              std::vector<store::NewMessage> messages,
                                                              TimeMs now) {
  store::InsertParams params{std::move(queue), std::move(messages), now};
  auto inserted = co_await store_.messages_insert(std::move(params));
  for (const auto& item : inserted) {
    if (item.created) announce_change(item.message, now);
  }
  co_return inserted;
}

awaitable<std::vector<Message>> QueueService::list(store::ListParams params) {
  co_return co_await store_.messages_list(std::move(params));
}

awaitable<Result<Message>> QueueService::find(std::string queue, MessageId id) {
  auto found = co_await store_.message_find(std::move(queue), id);
  if (!found) co_return Error(Errc::message_not_found, "message not found");
  co_return std::move(*found);
}

store::ClaimParams QueueService::claim_params(const ClaimCommand& cmd, TimeMs at) {
  TimeMs visibility = cmd.visibility_ms.value_or(
      seconds_to_ms(config_.policy_for(cmd.queue).visibility_timeout));
  return {cmd.queue, at, cmd.max, at + visibility, lease_token(), cmd.worker, cmd.job_types};
}

void QueueService::note_leases(const std::vector<Message>& claimed) {
  std::optional<TimeMs> earliest;
  for (const auto& m : claimed) {
    if (m.lease_expires_at && (!earliest || *m.lease_expires_at < *earliest)) {
      earliest = m.lease_expires_at;
    }
  }
  if (earliest) asio::post(strand_, [this, at = *earliest] { on_lease(at); });
}

awaitable<std::vector<Message>> QueueService::claim(ClaimCommand cmd, TimeMs now,
                                                    std::shared_ptr<ClaimCancel> cancel) {
  // The common case under load: there is work. Take it without a trip through the strand; only
  // a claim that found nothing and may wait goes there to park.
  if (!stopping_) {
    auto claimed = co_await store_.messages_claim(claim_params(cmd, now));
    if (!claimed.empty() || cmd.wait_ms == 0) {
      note_leases(claimed);
      co_return claimed;
    }
  }
  co_return co_await asio::co_spawn(strand_, claim_on_strand(std::move(cmd), now, std::move(cancel)),
                                    use_awaitable);
}

void QueueService::cancel_claim(std::shared_ptr<ClaimCancel> cancel) {
  asio::post(strand_, [cancel = std::move(cancel)] {
    cancel->cancelled = true;
    if (cancel->waiter) cancel->waiter->timer.cancel();
  });
}

// Runs on the strand, so that checking for work and parking cannot miss a wake-up: an event that
// makes work claimable while no waiter is parked leaves a token, and a claim whose query found
// nothing takes a token (and looks again) before it parks.
awaitable<std::vector<Message>> QueueService::claim_on_strand(ClaimCommand cmd, TimeMs now,
                                                              std::shared_ptr<ClaimCancel> cancel) {
  const auto deadline = steady_clock::now() + std::chrono::milliseconds(cmd.wait_ms);
  // A pinned X-Now runs on from its instant as the clock moves. Without one, every attempt reads
  // the clock: a woken claim must look at the instant it was woken for, not at the (earlier)
  // instant its request arrived, or a retry that just became due would be missed.
  const TimeMs clock_offset = cmd.pinned_now ? now - clock_.now() : 0;

  // Leaves no waiter and no claim state behind, however the claim ends (answer, timeout,
  // cancel, store fault).
  struct Parking {
    QueueService& service;
    const std::string& queue;
    std::shared_ptr<ClaimCancel>& cancel;
    std::unique_ptr<Waiter> waiter;
    bool claimed = false;
    ~Parking() {
      if (waiter) {
        --service.waiting_;
        service.waiters_.remove(queue, waiter.get());
        if (cancel) cancel->waiter = nullptr;
        // A wake-up meant for this waiter, or more work after what it took, goes to the next.
        if ((waiter->woken || claimed) && !service.stopping_) {
          service.waiters_.wake_one(queue, std::nullopt);
        }
      }
      auto it = service.claims_.find(queue);
      if (it != service.claims_.end() && --it->second.active == 0) service.claims_.erase(it);
    }
  } parking{*this, cmd.queue, cancel, nullptr};
  ++claims_[cmd.queue].active;

  std::vector<Message> claimed;
  for (;;) {
    if (stopping_ || (cancel && cancel->cancelled)) break;
    claimed = co_await store_.messages_claim(claim_params(cmd, clock_.now() + clock_offset));
    if (!claimed.empty()) {
      for (const auto& m : claimed) {
        if (m.lease_expires_at) on_lease(*m.lease_expires_at);
      }
      parking.claimed = true;
      break;
    }
    if (steady_clock::now() >= deadline) break;
    if (ClaimState& state = claims_[cmd.queue]; state.tokens > 0) {
      --state.tokens;
      continue;
    }
    if (!parking.waiter) {
      parking.waiter = std::make_unique<Waiter>(strand_);
      parking.waiter->job_types = cmd.job_types;
      waiters_.park(cmd.queue, parking.waiter.get());
      if (cancel) cancel->waiter = parking.waiter.get();
      ++waiting_;
    }
    parking.waiter->woken = false;
    parking.waiter->timer.expires_at(deadline);
    co_await parking.waiter->timer.async_wait(asio::as_tuple(use_awaitable));
  }
  co_return claimed;
}

awaitable<Result<Message>> QueueService::update(std::string queue, MessageId id,
                                                store::Decide decide, bool load_key_holders) {
  store::UpdateParams params{std::move(queue), id, std::move(decide), load_key_holders, false};
  co_return co_await store_.message_update(std::move(params));
}

awaitable<Result<Message>> QueueService::succeed(std::string queue, MessageId id,
                                                 std::optional<std::string> lease_id, TimeMs now) {
  store::Decide decide = [lease_id, now](const Message& m, const store::Related&) {
    return core::succeed(m, lease_id, now);
  };
  co_return co_await update(std::move(queue), id, std::move(decide));
}

awaitable<Result<Message>> QueueService::fail(std::string queue, MessageId id, FailInput in,
                                              TimeMs now) {
  const QueuePolicy& policy = config_.policy_for(queue);
  store::Decide decide = [in = std::move(in), &policy, now, this](const Message& m,
                                                                    const store::Related&) {
    return core::fail(m, in, policy, now, random_);
  };
  auto result = co_await update(std::move(queue), id, std::move(decide));
  if (result) announce_change(*result, now);
  co_return result;
}

awaitable<Result<Message>> QueueService::replay(std::string queue, MessageId id, ReplayInput in,
                                                TimeMs now, bool dry_run) {
  store::Decide decide = [in = std::move(in), now, this](const Message& m,
                                                         const store::Related& r) {
    if (!in.payload) return core::replay(m, r, in, now);
    ReplayInput merged = in;  // masks the operator left in place keep the original values
    merged.payload = redactor_.merge_masks(m.payload, *in.payload);
    return core::replay(m, r, merged, now);
  };
  store::UpdateParams params{std::move(queue), id, std::move(decide), true, dry_run};
  auto result = co_await store_.message_update(std::move(params));
  if (result && !dry_run) announce_change(*result, now);
  co_return result;
}

awaitable<std::vector<Result<Message>>> QueueService::succeed_many(std::string queue,
                                                                  std::vector<AckItem> items,
                                                                  TimeMs now) {
  std::vector<store::UpdateParams> updates;
  updates.reserve(items.size());
  for (auto& item : items) {
    store::Decide decide = [lease_id = std::move(item.lease_id), now](const Message& m,
                                                                      const store::Related&) {
      return core::succeed(m, lease_id, now);
    };
    updates.push_back({queue, item.id, std::move(decide), false, false});
  }
  co_return co_await store_.messages_update(std::move(updates));
}

awaitable<Result<Message>> QueueService::extend(std::string queue, MessageId id,
                                                std::string lease_id,
                                                std::optional<TimeMs> duration_ms,
                                                std::optional<std::string> checkpoint, TimeMs now) {
  TimeMs duration =
      duration_ms.value_or(seconds_to_ms(config_.policy_for(queue).visibility_timeout));
  store::Decide decide = [lease_id = std::move(lease_id), expires = now + duration,
                          checkpoint = std::move(checkpoint),
                          now](const Message& m, const store::Related&) {
    return core::extend(m, lease_id, expires, checkpoint, now);
  };
  co_return co_await update(std::move(queue), id, std::move(decide));
}

awaitable<Result<Message>> QueueService::release(std::string queue, MessageId id,
                                                 std::string lease_id, TimeMs delay_ms,
                                                 TimeMs now) {
  std::optional<TimeMs> due = delay_ms > 0 ? std::optional<TimeMs>(now + delay_ms) : std::nullopt;
  store::Decide decide = [lease_id = std::move(lease_id), due, now](const Message& m,
                                                                     const store::Related&) {
    return core::release(m, lease_id, due, now);
  };
  auto result = co_await update(std::move(queue), id, std::move(decide));
  if (result) announce_change(*result, now);
  co_return result;
}

awaitable<Result<Message>> QueueService::dismiss(std::string queue, MessageId id,
                                                 std::optional<std::string> reason,
                                                 std::optional<std::string> actor, TimeMs now) {
  store::Decide decide = [reason = std::move(reason), actor = std::move(actor), now](
                             const Message& m, const store::Related&) {
    return core::dismiss(m, reason, actor, now);
  };
  co_return co_await update(std::move(queue), id, std::move(decide));
}

awaitable<Result<std::vector<AttemptRecord>>> QueueService::attempts(std::string queue,
                                                                     MessageId id) {
  auto found = co_await store_.message_find(queue, id);
  if (!found) co_return Error(Errc::message_not_found, "message not found");
  auto history = co_await store_.attempts_list(std::move(queue), id);
  co_return history;
}

awaitable<std::vector<store::QueueStats>> QueueService::stats(std::optional<std::string> queue,
                                                             TimeMs now) {
  co_return co_await store_.queue_stats(std::move(queue), now);
}

awaitable<bool> QueueService::ready() {
  try {
    co_return co_await store_.ping();
  } catch (const std::exception&) {
    co_return false;
  }
}

// ---- timers ----------------------------------------------------------------------------------

// One timer for everything time-driven: due retries, expired leases and the once-a-second
// refresh of the schedule from the database (the safety net for changes made elsewhere).
awaitable<void> QueueService::timer_loop() {
  while (!stopping_) {
    try {
      TimeMs now = clock_.now();
      bool refresh = false;
      if (next_lease_expiry_ && *next_lease_expiry_ <= now) {
        next_lease_expiry_.reset();
        co_await reap(now);
        refresh = true;
      }
      // Each message that became due wakes one claimer of its queue.
      while (!due_events_.empty() && due_events_.begin()->first <= now) {
        on_ready(due_events_.begin()->second, std::nullopt, 1);
        due_events_.erase(due_events_.begin());
      }
      if (db_next_due_ && *db_next_due_ <= now) {
        db_next_due_.reset();
        for (auto& [queue, state] : claims_) give_token(state);
        waiters_.wake_one_per_queue();
        refresh = true;
      }
      if (now >= next_maintenance_) {
        next_maintenance_ = now + kMaintenanceIntervalMs;
        refresh = true;
      }
      if (refresh) co_await refresh_schedule(now);
    } catch (const std::exception& e) {
      log::warn("timer work failed; retrying", {{"error", e.what()}});
    }
    if (stopping_) break;

    TimeMs now = clock_.now();
    TimeMs next = next_maintenance_;
    if (next_lease_expiry_) next = std::min(next, *next_lease_expiry_);
    if (db_next_due_) next = std::min(next, *db_next_due_);
    if (!due_events_.empty()) next = std::min(next, due_events_.begin()->first);
    armed_for_ = next;
    wake_timer_.expires_after(std::chrono::milliseconds(std::max<TimeMs>(0, next - now)));
    co_await wake_timer_.async_wait(asio::as_tuple(use_awaitable));
  }
}

awaitable<void> QueueService::reap(TimeMs now) {
  for (;;) {
    store::ReapParams params;
    params.now = now;
    params.limit = kReapBatch;
    params.decide = [this, now](const Message& m) {
      return expire_lease(m, config_.policy_for(m.queue), now, random_);
    };
    auto reaped = co_await store_.messages_reap_expired(std::move(params));
    for (const auto& m : reaped) {
      log::info("lease expired", {{"queue", m.queue},
                                  {"id", std::to_string(m.id)},
                                  {"status", std::string(to_string(m.status))}});
      if (m.status == Status::pending && m.retry_after) on_due(m.queue, *m.retry_after);
    }
    if (static_cast<int>(reaped.size()) < kReapBatch) break;
  }
}

awaitable<void> QueueService::refresh_schedule(TimeMs now) {
  auto schedule = co_await store_.schedule_peek(now);
  db_next_due_ = schedule.next_due;
  if (schedule.next_lease_expiry &&
      (!next_lease_expiry_ || *schedule.next_lease_expiry < *next_lease_expiry_)) {
    next_lease_expiry_ = schedule.next_lease_expiry;
  }
}

}  // namespace dlq::core
