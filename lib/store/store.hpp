// The Store interface: every queue operation dlq performs on its database, one params struct
// each, results as domain structs. Operations are awaited by the core; the implementation runs
// them on its own threads (never on the I/O threads) and commits writes in groups. Expected
// outcomes come back as values; faults (a database that went away) are thrown.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "model/audit.hpp"
#include "store/change.hpp"
#include "store/desk.hpp"
#include "model/error.hpp"
#include "model/histogram.hpp"
#include "model/message.hpp"
#include "model/trial.hpp"

namespace dlq::store {

template <class T>
using awaitable = boost::asio::awaitable<T>;

struct NewMessage {
  std::string payload;
  int max_retries = 3;
  int priority = 0;
  std::optional<std::string> job_type;
  std::optional<std::string> idempotency_key;
  std::optional<TimeMs> run_at;  // first claimable time (stored as retry_after)
  std::optional<std::string> sqs_attributes;  // SendMessage's MessageAttributes (JSON text)
};

struct InsertParams {
  std::string queue;
  std::vector<NewMessage> messages;  // inserted in order, in one transaction
  TimeMs now = 0;
  // limits.max_queues: the most queues that may hold messages (0: no limit). A queue holding
  // none yet whose name would go beyond it is refused.
  long long max_queues = 0;
};

struct Inserted {
  Message message;
  bool created = true;  // false: an in-flight or succeeded holder of the idempotency key
};

struct ListParams {
  std::string queue;
  std::optional<Status> status;
  int limit = 20;
  int offset = 0;
  // Issue 34 (A3): newest first, a job type, an error class, and pending messages that failed
  // or lost a lease before (retry_count >= 1 or lease_expiries >= 1; status is then pending).
  bool descending = false;
  std::optional<std::string> job_type;
  std::optional<ErrorClass> error_class;
  bool retrying = false;

  bool plain() const { return !descending && !job_type && !error_class && !retrying; }
};

struct ClaimParams {
  std::string queue;
  TimeMs now = 0;
  int max = 1;
  TimeMs lease_expires_at = 0;
  std::string lease_token;  // 128 random bits, hex; each message's lease_id is token-id
  std::optional<std::string> worker;
  std::vector<std::string> job_types;  // empty: any
  // The payloads that come back, in claim order: the first message's, then the next ones' while
  // they add up to at most this many bytes. The messages after those come back without theirs
  // (Message::payload_withheld), so a batch of large messages is never held whole.
  std::size_t payload_budget = SIZE_MAX;
  std::optional<std::string> worker_version;
  // "trials": true (issue 36): the queue's pending trials of `job_types` come first, each as its
  // message under the trial's lease (Message::trial_id set), then ordinary messages.
  bool trials = false;
};

struct UpdateParams {
  std::string queue;
  MessageId id = 0;
  Decide decide;  // called inside the transaction, with the row locked
  bool load_key_holders = false;
  bool dry_run = false;  // compute and return the result, write nothing
  bool load_last_entry = false;  // Related::last_entry (a release, which may fold into it)
  bool load_effects = false;     // Related::effects (a replay resolving effects)
};

// Recording a side effect (POST .../effects): what the core decides about the key, given the
// message (locked) and the key's row if it has one. `put` writes `effect` (new or changed),
// `remove` deletes the key, `keep` writes nothing (a resent `done`).
struct EffectOutcome {
  enum class Op { keep, put, remove };
  Op op = Op::keep;
  Effect effect;
  bool cleared = false;  // the request cleared the key (answered as state "cleared")
};
using DecideEffect = std::function<Result<EffectOutcome>(const Message& current,
                                                         const std::optional<Effect>& existing)>;
struct EffectParams {
  std::string queue;
  MessageId id = 0;
  std::string key;
  DecideEffect decide;
};

// ---- trial runs (issue 36) -------------------------------------------------------------------

struct TrialStartItem {
  std::optional<std::string> queue;  // none: the message's own, looked up by id (POST /dlq/trials)
  MessageId id = 0;
};
struct TrialStarted {
  Trial trial;
  bool created = false;  // false: the message's open trial, answered again
};
// Per item, on its message (locked; null when there is none with that id in that queue) and the
// message's open trial: the trial to start (id 0), or the open one to answer again. The first
// error ends the call and nothing is written.
using DecideTrialStart = std::function<Result<Trial>(std::size_t index, const Message* message,
                                                     const std::optional<Trial>& open)>;
struct TrialStartParams {
  std::vector<TrialStartItem> items;
  DecideTrialStart decide;
  // The audit entry of what started (none: nothing to audit), written in the same transaction.
  std::function<std::optional<AuditEntry>(const std::vector<TrialStarted>&)> audit;
};

// A trial as it must become, and the history entry its end appends to its message.
struct TrialChange {
  Trial next;
  std::optional<AttemptRecord> entry;
};
// Answering a running trial: decided on the trial (locked) and its message.
using DecideTrial = std::function<Result<TrialChange>(const Trial& current, const Message& message)>;
struct TrialUpdateParams {
  std::string queue;
  MessageId id = 0;
  long long trial_id = 0;
  DecideTrial decide;
};
// The leader's sweep: open trials whose lease ran out at `now`, or pending since before
// `pending_before`, each ended by `decide` (its message may be gone: purged meanwhile).
struct TrialExpireParams {
  TimeMs now = 0;
  TimeMs pending_before = 0;
  long long limit = 100;
  std::function<TrialChange(const Trial& current, const Message* message)> decide;
};

// Acknowledgements and a claim, applied in one transaction (http-api B6, claim with `ack`).
struct AckAndClaim {
  std::vector<Result<Message>> acked;  // one per update, in order
  std::vector<Message> claimed;
};

struct ReapParams {
  TimeMs now = 0;
  int limit = 100;
  std::function<Change(const Message& expired)> decide;
};

// When the timers must next look at the database.
struct Schedule {
  std::optional<TimeMs> next_due;           // earliest retry_after still in the future
  std::optional<TimeMs> next_lease_expiry;  // earliest lease_expires_at of a processing message
};

// Counts per status for one queue (pending split into ready and scheduled), and the age of its
// oldest ready and oldest dead message.
struct QueueStats {
  std::string queue;
  long long ready = 0;
  long long scheduled = 0;
  long long processing = 0;
  long long succeeded = 0;
  long long dead = 0;
  long long dismissed = 0;
  std::optional<TimeMs> oldest_ready_since;
  std::optional<TimeMs> oldest_dead_at;
};

// GET /queues: the queues that hold messages, by name in byte order, after `after`.
struct QueuePageParams {
  std::optional<std::string> after;
  int limit = 1000;
  TimeMs now = 0;
};

// A change committed elsewhere (another dlqd node on the same PostgreSQL database) made messages
// of `queue` due at `due` (ms; 0 or past: now). An empty queue means "changes may have been
// missed: look at every queue".
using ChangeCallback = std::function<void(const std::string& queue, TimeMs due)>;

// GET /audit: newest first; each filter optional.
struct AuditQuery {
  std::optional<std::string> action;
  std::optional<std::string> actor;
  std::optional<std::string> queue;
  std::optional<TimeMs> since;  // at >= since
  std::optional<TimeMs> until;  // at <= until
  int limit = 20;
  std::optional<long long> before_id;  // entries with a smaller id (after_id on the wire)
};

// Deleting finished messages (retention, purge): at most `limit` of `status` that entered it
// before `before`, in `queue` or in every queue but `except`, with their history, and the audit
// entry `audit` makes of what was deleted — all in one transaction.
struct PurgeParams {
  Status status = Status::succeeded;
  TimeMs before = 0;
  std::optional<std::string> queue;
  std::vector<std::string> except;  // queues with a retention of their own
  int limit = 1000;
  std::function<AuditEntry(const std::vector<std::pair<std::string, long long>>& by_queue)> audit;
  // An SQS queue's MessageRetentionPeriod (issue 38): besides `before`, only messages created
  // before this instant, and none whose retry_after is after `due_by` (still ahead).
  std::optional<TimeMs> created_before;
  std::optional<TimeMs> due_by;
};
struct Purged {
  std::vector<std::pair<std::string, long long>> by_queue;  // queue -> deleted, queue order
  long long total = 0;
};

// A page of a message's history: skip `after` entries, then at most `limit`.
struct HistoryPage {
  long long after = 0;
  long long limit = 1000;
};

// A message and a page of its history, read together.
struct MessageHistory {
  Message message;
  std::vector<AttemptRecord> attempts;  // the page, oldest first
  long long stored = 0;                 // entries stored in all (the attempt under way is not)
  std::vector<Effect> effects{};        // every recorded side effect, by key
};

// An edited replay as the history keeps it: the payload it replaced, when, by whom, why.
struct PayloadEdit {
  std::string previous_payload;
  TimeMs at = 0;
  std::optional<std::string> actor;
  std::optional<std::string> reason;
};

// A message and some of its edited replays, oldest first: skip `from` of them, then at most
// `count` (GET .../versions pages through them).
struct MessageEdits {
  Message message;
  std::vector<PayloadEdit> edits;
};

// Leadership among the nodes that share one database: called with true when this node became
// the leader, false when it lost the leadership (from a store thread).
using LeadershipCallback = std::function<void(bool leading)>;

// The leader's record in the database (the one-row `leadership` table): who leads, since when,
// last renewed when. A hint for operators and for the leader's own checks, not a fence.
struct LeadershipRecord {
  std::string node;
  TimeMs since = 0;
  TimeMs renewed_at = 0;
};
struct LeadershipRenewParams {
  std::string node;
  TimeMs now = 0;
  // Another node's record is taken over only when it was last renewed before this instant.
  TimeMs stale_before = 0;
};

// Counters of the write path since start: how well group commit groups, and where a write's
// time goes (queued, its group's statements, the COMMIT, the way back to the request).
struct WriteStats {
  std::uint64_t commits = 0;
  std::uint64_t operations = 0;
  Histogram::Snapshot commit_seconds;
  Histogram::Snapshot wait_seconds;        // per write: queued until its group began
  Histogram::Snapshot statements_seconds;  // per group: BEGIN until COMMIT was sent
  Histogram::Snapshot handback_seconds;    // per write: committed until its request resumed
};

// ---- the SQS front's queues (issue 38) ------------------------------------------------------

// A row of sqs_queues: a queue SQS clients created. `attributes` and `tags` are JSON objects of
// strings (the attributes set explicitly; defaults are not stored).
struct SqsQueueRow {
  std::string name;
  std::string attributes = "{}";
  std::string tags = "{}";
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
  std::optional<TimeMs> retention_set_at;
};
// What a registry change writes: nothing, or `row` (inserted or replaced).
struct SqsQueueChange {
  bool put = false;
  SqsQueueRow row;
};
// Decided with the queue's row locked (none: no such queue). `queues_in_use`: the names that
// limits.max_queues counts (registry and queues holding messages), read only when there is no
// row (a CreateQueue of a new name).
using DecideSqsQueue = std::function<Result<SqsQueueChange>(
    const std::optional<SqsQueueRow>& existing, long long queues_in_use)>;
struct SqsQueuePage {
  std::string prefix;  // names starting with it
  std::optional<std::string> after;
  int limit = 1000;
};
// A ReceiveMessage on an SQS dead-letter queue (issue 39): up to `max` of the dead letters
// stamped with `dlq` that no receive hides at `now`, oldest dead_at first, each hidden until
// `hidden_until` under `receipt` (their status stays dead).
struct SqsDeadReceive {
  std::string dlq;
  int max = 1;
  TimeMs now = 0;
  TimeMs hidden_until = 0;
  std::string receipt;
};
// ChangeMessageVisibility of such a dead letter: moves its hiding while `receipt` is its latest.
struct SqsDeadHide {
  std::string dlq;
  MessageId id = 0;
  std::string receipt;
  TimeMs hidden_until = 0;
};
// The dead letters stamped with a dead-letter queue: shown (not hidden at `now`) and hidden.
struct SqsDeadCounts {
  long long visible = 0;
  long long hidden = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  // One queue's messages, in one transaction. A queue that holds no message yet is admitted
  // first (its name kept from now on, until purge or retention empties it); over p.max_queues
  // the answer is a validation error on `queue` with code `limit`, and nothing is stored.
  virtual awaitable<Result<std::vector<Inserted>>> messages_insert(InsertParams p) = 0;
  virtual awaitable<std::vector<Message>> messages_list(ListParams p) = 0;
  // The ids of the page messages_list would return, in its order (a page fixed by its ids,
  // whose messages are then read one at a time: an answer never holds the whole page).
  virtual awaitable<std::vector<MessageId>> messages_list_ids(ListParams p) = 0;
  virtual awaitable<std::optional<Message>> message_find(std::string queue, MessageId id) = 0;
  // Atomically moves up to `max` due pending messages to processing and returns them in claim
  // order (priority, then created_at, then id).
  virtual awaitable<std::vector<Message>> messages_claim(ClaimParams p) = 0;
  // Reads the message under a lock, lets `decide` compute the transition, writes it. A message
  // that does not exist (or lives in another queue) is Errc::message_not_found.
  virtual awaitable<Result<Message>> message_update(UpdateParams p) = 0;
  // Several independent updates in one store job (batch ack); each has its own outcome.
  virtual awaitable<std::vector<Result<Message>>> messages_update(std::vector<UpdateParams> p) = 0;
  // The updates (each with its own outcome), then the claim, in one transaction and one commit:
  // a worker's acknowledgements ride with its next claim.
  virtual awaitable<AckAndClaim> messages_ack_and_claim(std::vector<UpdateParams> acks,
                                                        ClaimParams claim) = 0;
  // Records, changes or clears one side effect of a message, with the message's row locked; the
  // message's effect_count follows. A message not in `queue` is Errc::message_not_found.
  virtual awaitable<Result<EffectOutcome>> effect_record(EffectParams p) = 0;
  // A message's recorded side effects, by key.
  virtual awaitable<std::vector<Effect>> effects_of(MessageId id) = 0;
  // Starts trials (or answers the open ones), all decided before any is written, with the
  // audit entry, in one transaction; a new trial wakes claims that asked for trials (NOTIFY).
  virtual awaitable<Result<std::vector<TrialStarted>>> trials_start(TrialStartParams p) = 0;
  // A trial of message `id` in `queue`; none when there is no such trial of that message.
  virtual awaitable<std::optional<Trial>> trial_find(std::string queue, MessageId id,
                                                     long long trial_id) = 0;
  // Answers a trial under its lock: Errc::trial_not_found when it is not the message's.
  virtual awaitable<Result<Trial>> trial_update(TrialUpdateParams p) = 0;
  // Ends the trials that expired; returns them as they became.
  virtual awaitable<std::vector<Trial>> trials_expire(TrialExpireParams p) = 0;
  // Applies `decide` to processing messages whose lease expired at or before `now`.
  virtual awaitable<std::vector<Message>> messages_reap_expired(ReapParams p) = 0;
  // The message and a page of its history in one read; none when the id is not in `queue`.
  virtual awaitable<std::optional<MessageHistory>> message_history(std::string queue, MessageId id,
                                                                   HistoryPage page = {}) = 0;
  // The message and its edited replays (`replayed` entries with a previous payload) from the
  // `from`-th on, at most `count`; none when the id is not in `queue`.
  virtual awaitable<std::optional<MessageEdits>> message_edits(std::string queue, MessageId id,
                                                               long long from,
                                                               long long count) = 0;
  virtual awaitable<Schedule> schedule_peek(TimeMs now) = 0;
  // Every queue that has messages (queue empty), or just `queue` (zeros when it has none).
  virtual awaitable<std::vector<QueueStats>> queue_stats(std::optional<std::string> queue,
                                                         TimeMs now) = 0;
  // Up to p.limit queues that hold messages, in byte order of their names after p.after, each
  // with its counts (zeros for one emptied since its name was read).
  virtual awaitable<std::vector<QueueStats>> queues_page(QueuePageParams p) = 0;
  // Deaths per hour (dead_letter_hours): `hours` counts, the first for the hour at `from_hour`.
  virtual awaitable<std::vector<long long>> dead_hourly(std::optional<std::string> queue,
                                                        TimeMs from_hour, int hours) = 0;
  // Delivers changes committed by other nodes (PostgreSQL LISTEN/NOTIFY; nothing on SQLite,
  // where one process owns the file). Call once, before serving.
  virtual void subscribe_changes(ChangeCallback callback) = 0;

  // Up to p.limit audit entries, newest first.
  virtual awaitable<std::vector<AuditEntry>> audit_list(AuditQuery p) = 0;
  // The ids of the page audit_list would return, in its order (GET /audit reads each entry
  // when its turn to be written comes, so an answer never holds the whole page).
  virtual awaitable<std::vector<long long>> audit_ids(AuditQuery p) = 0;
  virtual awaitable<std::optional<AuditEntry>> audit_find(long long id) = 0;

  // Deletes one batch of finished messages; none deleted writes no audit entry. A queue left
  // with no message leaves the queues that max_queues counts.
  virtual awaitable<Purged> messages_purge(PurgeParams p) = 0;

  // The dead-letter desk (desk.hpp).
  // Dead messages matching the filter, in id order after `after_id`, at most `limit`.
  virtual awaitable<std::vector<Message>> messages_dead(DeadListParams p) = 0;
  // The same page as ids and queues, for an answer that reads each message when its turn comes.
  virtual awaitable<std::vector<DeadRef>> messages_dead_refs(DeadListParams p) = 0;
  virtual awaitable<DeadMatch> dead_match(DeadMatchParams p) = 0;
  // Saves the preview; beyond p.keep unexpired ones (every node's), the oldest are deleted in
  // the same transaction (their tokens are then stale). True once saved.
  virtual awaitable<bool> batch_preview_save(BatchPreview p) = 0;
  virtual awaitable<Result<Confirmed>> batch_confirm(ConfirmParams p) = 0;
  virtual awaitable<Result<Confirmed>> run_start(RunStartParams p) = 0;
  virtual awaitable<DismissBatch> messages_dismiss_batch(DismissBatchParams p) = 0;
  virtual awaitable<std::optional<ReplayRun>> replay_run_find(long long id) = 0;
  virtual awaitable<std::vector<ReplayRun>> replay_runs_list(RunListParams p) = 0;
  virtual awaitable<RunStep> replay_run_step(RunStepParams p) = 0;
  virtual awaitable<Result<ReplayRun>> replay_run_change(RunChangeParams p) = 0;

  // Incidents (desk.hpp): counted in the transactions that move their messages.
  // Up to p.limit incidents with dead messages, in p.sort's order after p.after.
  virtual awaitable<std::vector<Incident>> incidents_list(IncidentQuery p) = 0;
  // One incident, with per_hour from `from_hour`; none when it has no dead message.
  virtual awaitable<std::optional<Incident>> incident_find(std::string fingerprint,
                                                           TimeMs from_hour, int hours) = 0;
  // The incidents' gauges of /metrics: open incidents and the `top` largest (IncidentGauges).
  virtual awaitable<IncidentGauges> incident_gauges(int top) = 0;
  // Mutes or un-mutes an incident and writes p.audit's entry, in one transaction; none for a
  // fingerprint that never died (an emptied incident can be muted).
  virtual awaitable<std::optional<IncidentMuted>> incident_mute(IncidentMuteParams p) = 0;
  // The leader's incident alerts (IncidentAlertParams), marked in one transaction: the events
  // to send. A row another leader marked first is not returned.
  virtual awaitable<std::vector<IncidentAlert>> incidents_alert(IncidentAlertParams p) = 0;
  // One batch of retention (IncidentPruneParams), in one transaction.
  virtual awaitable<IncidentsPruned> incidents_prune(IncidentPruneParams p) = 0;
  // The backfill: up to `limit` dead messages without a fingerprint, ids above `after`, in id
  // order; then, in one transaction, each one's fingerprint and title set where it is still dead
  // without one, and those counted into their incidents (how many: a row another node wrote
  // first is neither written nor counted again).
  virtual awaitable<std::vector<UnprintedDead>> incidents_unprinted(MessageId after, int limit) = 0;
  virtual awaitable<long long> incidents_backfill(std::vector<PrintedDead> rows) = 0;

  // Campaigns for the leadership of this database and reports every change to `callback` until
  // close(). SQLite: this process owns the file and leads at once. PostgreSQL: a session-level
  // advisory lock on a dedicated connection; another node takes over within the configured
  // takeover bound after the leader dies or loses that connection. Call once.
  virtual void campaign(LeadershipCallback callback) = 0;
  // Writes this node into the leadership record if the record is its own or stale; returns the
  // record as it is now (another node's, if that one still renews it).
  virtual awaitable<LeadershipRecord> leadership_renew(LeadershipRenewParams p) = 0;
  // This process's id among the nodes (change notifications, the leadership record, logs).
  virtual const std::string& node_id() const = 0;

  // The SQS front's queue registry. A change returns the row as it is afterwards (none when
  // there is none); deleting a row leaves its messages (the caller purges them first).
  virtual awaitable<Result<std::optional<SqsQueueRow>>> sqs_queue_change(std::string name,
                                                                          DecideSqsQueue decide) = 0;
  virtual awaitable<std::optional<SqsQueueRow>> sqs_queue_find(std::string name) = 0;
  virtual awaitable<std::vector<SqsQueueRow>> sqs_queues_page(SqsQueuePage p) = 0;
  virtual awaitable<bool> sqs_queue_delete(std::string name) = 0;
  // Dead letters in `queue` or stamped with it as their dead-letter queue (issue 39).
  virtual awaitable<long long> dead_count(std::string queue) = 0;
  virtual awaitable<std::vector<Message>> sqs_dead_receive(SqsDeadReceive p) = 0;
  // False when the letter is no longer dead in `dlq`, or another receive took it since.
  virtual awaitable<bool> sqs_dead_hide(SqsDeadHide p) = 0;
  virtual awaitable<SqsDeadCounts> sqs_dead_counts(std::string dlq, TimeMs now) = 0;

  // True when the database answers and its schema is current.
  virtual awaitable<bool> ping() = 0;

  virtual WriteStats write_stats() const = 0;

  // Finishes queued work, then closes every connection. Operations after close throw.
  virtual void close() = 0;
};

}  // namespace dlq::store
