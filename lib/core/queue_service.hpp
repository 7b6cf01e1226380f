// QueueService: the queue as the HTTP layer sees it — every operation, each run atomically in the
// store. After a change it tells the WakeScheduler what became claimable and publishes an Event;
// it owns neither waiting nor background work. It knows no HTTP and no SQL. Time comes in with
// the request (RequestContext::now, from X-Now or the clock); timers use the real clock.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "config/config.hpp"
#include "core/events.hpp"
#include "core/redaction.hpp"
#include "core/sqs_queue_set.hpp"
#include "core/request_context.hpp"
#include "core/transitions.hpp"
#include "core/versions.hpp"
#include "core/wake_scheduler.hpp"
#include "model/time.hpp"
#include "store/store.hpp"

namespace dlq::core {

// One acknowledgement: succeed message `id` under `lease_id` (POST /ack, or a claim's `ack`).
struct AckItem {
  MessageId id = 0;
  std::optional<std::string> lease_id;
};

// What a claim's answer keeps of its messages' payloads in memory while its client reads: the
// first message's, then the next ones' up to this many bytes in all. The rest are withheld by the
// store and read again by id when their turn to be written comes (find_leased); a batch of small
// messages never is.
inline constexpr std::size_t kClaimPayloadBytes = 256 * 1024;

struct ClaimCommand {
  std::string queue;
  int max = 1;
  TimeMs wait_ms = 0;
  std::optional<TimeMs> visibility_ms;  // default: the queue's policy
  std::optional<std::string> worker;
  std::optional<std::string> worker_version;  // at most 64 bytes (core/requests.cpp)
  std::vector<std::string> job_types;
  // Acknowledgements applied in the claim's transaction (http-api B6); none: a plain claim.
  std::vector<AckItem> acks;
  // "trials": true (needs job_types): pending trial runs of those types come first (issue 36).
  bool trials = false;
};

struct ClaimOutcome {
  std::vector<Message> messages;
  std::vector<Result<Message>> acked;  // one per ClaimCommand::acks item, in order
  // The client left while the claim waited: what it had taken was released; nobody to answer.
  bool client_gone = false;
};

// A page of a message's history (GET .../attempts).
struct HistoryView {
  std::vector<AttemptRecord> entries;  // oldest first
  // The position of the page's last entry (entries to skip for the next page); none at the end.
  std::optional<long long> next_after;
  std::vector<Effect> effects;  // every recorded side effect of the message, by key
};

class QueueService {
 public:
  QueueService(boost::asio::any_io_executor executor, store::Store& store, const Config& config,
               const Clock& clock, UnitRandom random = default_unit_random());
  ~QueueService();

  // Starts the wake-up scheduler (due times, lease reaper, once-a-second schedule refresh).
  // Subscribe to events() before this.
  void start();
  // Thread-safe. Wakes every parked claimer (they answer empty) and stops the scheduler.
  void shutdown();
  // Thread-safe. The clock jumped (tests move a ManualClock): re-evaluate the timers now.
  void clock_moved();

  // Every operation takes the request's context; it must outlive the call (handlers co_await
  // in place).
  // A queue's first message beyond limits.max_queues is a validation error (`queue`, `limit`).
  awaitable<Result<std::vector<store::Inserted>>> enqueue(const RequestContext& ctx,
                                                          std::string queue,
                                                          std::vector<store::NewMessage> messages);
  awaitable<std::vector<Message>> list(const RequestContext& ctx, store::ListParams params);
  // The ids of the page list() would return, for answers that read one message at a time.
  awaitable<std::vector<MessageId>> list_ids(const RequestContext& ctx, store::ListParams params);
  awaitable<Result<Message>> find(const RequestContext& ctx, std::string queue, MessageId id);
  // A message this node claimed, as it is now, while `lease_id` still holds it; none once that
  // lease ended (acknowledged, failed, released, reaped). A batch claim's answer reads the
  // messages it did not keep in memory this way, and leaves those out.
  awaitable<std::optional<Message>> find_leased(const RequestContext& ctx, std::string queue,
                                                MessageId id, std::string lease_id);
  // Takes due messages, long-polling up to cmd.wait_ms. While it waits, ctx.client is watched:
  // a client that leaves ends the wait, and anything already taken for it is released.
  awaitable<ClaimOutcome> claim(const RequestContext& ctx, ClaimCommand cmd);

  awaitable<Result<Message>> succeed(const RequestContext& ctx, std::string queue, MessageId id,
                                     std::optional<std::string> lease_id);
  awaitable<Result<Message>> fail(const RequestContext& ctx, std::string queue, MessageId id,
                                  FailInput in);
  awaitable<Result<Message>> replay(const RequestContext& ctx, std::string queue, MessageId id,
                                    ReplayInput in, bool dry_run = false);
  // Batch ack: each item succeeds or fails on its own.
  using AckItem = core::AckItem;
  awaitable<std::vector<Result<Message>>> succeed_many(const RequestContext& ctx,
                                                       std::string queue,
                                                       std::vector<AckItem> items);
  awaitable<Result<Message>> extend(const RequestContext& ctx, std::string queue, MessageId id,
                                    std::string lease_id, std::optional<TimeMs> duration_ms,
                                    std::optional<std::string> checkpoint);
  awaitable<Result<Message>> release(const RequestContext& ctx, std::string queue, MessageId id,
                                     std::string lease_id, TimeMs delay_ms);
  awaitable<Result<Message>> dismiss(const RequestContext& ctx, std::string queue, MessageId id,
                                     std::optional<std::string> reason);
  // Records, changes or clears one side effect under the message's current lease (issue 36).
  awaitable<Result<store::EffectOutcome>> record_effect(const RequestContext& ctx,
                                                        std::string queue, MessageId id,
                                                        EffectInput in);
  // A page of the history, oldest first; a message being processed ends with its attempt under
  // way, on the last page.
  awaitable<Result<HistoryView>> attempts(const RequestContext& ctx, std::string queue,
                                          MessageId id, store::HistoryPage page);
  // A page of the payload versions, oldest first (core/versions.hpp).
  awaitable<Result<VersionsView>> versions(const RequestContext& ctx, std::string queue,
                                           MessageId id, VersionsPage page);
  // The audit log, newest first (GET /audit): the ids of a page, and one entry by id (none: no
  // longer stored), for an answer that reads each entry when its turn to be written comes.
  awaitable<std::vector<long long>> audit_ids(const RequestContext& ctx, store::AuditQuery query);
  awaitable<std::optional<AuditEntry>> audit_entry(const RequestContext& ctx, long long id);
  awaitable<std::vector<store::QueueStats>> stats(const RequestContext& ctx,
                                                  std::optional<std::string> queue);
  // GET /queues: a page of the queues that hold messages, by name.
  awaitable<std::vector<store::QueueStats>> queues_page(const RequestContext& ctx,
                                                        std::optional<std::string> after,
                                                        int limit);
  awaitable<bool> ready();

  // For changes made outside these operations (a batch replay run): wake claimers or arm the
  // due timer as the message's new state asks, and tell event subscribers.
  void after_change(const Message& m, TimeMs now) { scheduler_.changed(m, now); }
  // A trial run went pending: claims that asked for trials of its type look again.
  void trial_started(const std::string& queue, const std::string& job_type) {
    scheduler_.trial_ready(queue, job_type);
  }
  void publish(EventKind kind, const Message& m, TimeMs at,
               std::optional<std::string_view> actor, ReplayMode mode = ReplayMode::single);
  // An event about `count` messages of `queue` (enqueued, claimed, purged).
  void publish_count(EventKind kind, std::string_view queue, std::int64_t count, TimeMs at,
                     std::optional<Status> status = std::nullopt, bool by_retention = false);

  // The SQS front's queues as the hot paths see them (the front updates it on every change).
  SqsQueueSet& sqs_queues() { return sqs_queues_; }
  // Reloads sqs_queues() from the database when its last reload is a second old.
  awaitable<void> refresh_sqs_queues(TimeMs clock_now);

  const Config& config() const { return config_; }
  std::size_t waiting_claimers() const { return scheduler_.waiting(); }
  awaitable<std::map<std::string, std::size_t>> waiting_by_queue() {
    return scheduler_.waiting_by_queue();
  }
  store::WriteStats write_stats() const { return store_.write_stats(); }
  const Redactor& redactor() const { return redactor_; }
  const Clock& clock() const { return clock_; }
  Events& events() { return events_; }

 private:
  // Takes what is due now, or parks in the scheduler until something is or the wait ends
  // (watching the client, when there is one, while it is parked).
  awaitable<std::vector<Message>> take(const RequestContext& ctx, const ClaimCommand& cmd,
                                       std::shared_ptr<ClaimCancel> cancel, ClientWatch* watch,
                                       std::vector<Result<Message>>& acked);
  // The store updates of acknowledgements. `resent` gets one flag per item, set when the item
  // repeated an ack already applied (nothing written, no event).
  std::vector<store::UpdateParams> ack_updates(const RequestContext& ctx, const std::string& queue,
                                               std::vector<AckItem> items,
                                               std::shared_ptr<std::vector<char>> resent) const;
  // Publishes `succeeded` for each acknowledgement this request applied.
  void publish_acked(const RequestContext& ctx, const std::vector<Result<Message>>& acked,
                     const std::vector<char>& resent);
  store::ClaimParams claim_params(const ClaimCommand& cmd, TimeMs at) const;
  awaitable<Result<Message>> update(std::string queue, MessageId id, store::Decide decide,
                                    bool load_key_holders = false);
  // The lease reaper's pass: expired leases back to pending (or dead), announced and published.
  awaitable<std::vector<Message>> reap_expired(TimeMs now);
  // A message that went dead publishes dead_lettered.
  void publish_if_dead(const Message& m, TimeMs now, std::optional<std::string_view> actor);

  store::Store& store_;
  const Config& config_;
  const Clock& clock_;
  UnitRandom random_;
  Redactor redactor_;
  Events events_;
  SqsQueueSet sqs_queues_;
  std::atomic<bool> shadow_warned_{false};  // the first registry load warns of shadowed keys
  WakeScheduler scheduler_;
};

}  // namespace dlq::core
