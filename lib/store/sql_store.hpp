// The Store on SOCI: SQLite (one file, WAL) or PostgreSQL, chosen by the database URL. Writes go
// to the group-committing Writer, queries to the Readers; callers co_await the results, which
// come back on the caller's own executor.
#pragma once

#include <memory>
#include <string>

#include "config/database_url.hpp"
#include "store/fault_vfs.hpp"
#include "store/store.hpp"

namespace dlq::store {

class Writer;
class Readers;
class PgListener;
class PgLeader;

struct SqlStoreOptions {
  DatabaseTarget target{DatabaseTarget::Backend::sqlite, {}, {}};
  std::string sqlite_synchronous = "full";
  // Connections. SQLite: one writer (the database has one), the rest readers. PostgreSQL: half
  // writers (rounded down, at least one), half readers.
  int pool_size = 4;
  int group_commit_max_batch = 256;
  int group_commit_max_wait_us = 0;
  // PostgreSQL: the bound on a leader takeover (database.leader_takeover_seconds).
  TimeMs leader_takeover_ms = 5000;
  // PostgreSQL: statement_timeout of every connection. SQLite: max_page_count (0: none).
  TimeMs statement_timeout_ms = 30000;
  long long sqlite_max_page_count = 0;
  // testing.faults (only with --allow-testing-faults): SQLite's, and the writer answering each
  // job before its group's COMMIT (the bug the fault tests must catch).
  SqliteFaults sqlite_faults;
  bool answer_before_commit = false;
};

class SqlStore final : public Store {
 public:
  // Connects, applies pending migrations, starts the store threads. Throws when the database
  // cannot be reached or migrated.
  explicit SqlStore(SqlStoreOptions options);
  ~SqlStore() override;

  awaitable<Result<std::vector<Inserted>>> messages_insert(InsertParams p) override;
  awaitable<std::vector<Message>> messages_list(ListParams p) override;
  awaitable<std::vector<MessageId>> messages_list_ids(ListParams p) override;
  awaitable<std::optional<Message>> message_find(std::string queue, MessageId id) override;
  awaitable<std::vector<Message>> messages_claim(ClaimParams p) override;
  awaitable<Result<Message>> message_update(UpdateParams p) override;
  awaitable<std::vector<Result<Message>>> messages_update(std::vector<UpdateParams> p) override;
  awaitable<AckAndClaim> messages_ack_and_claim(std::vector<UpdateParams> acks,
                                                ClaimParams claim) override;
  awaitable<Result<EffectOutcome>> effect_record(EffectParams p) override;
  awaitable<std::vector<Effect>> effects_of(MessageId id) override;
  awaitable<Result<std::vector<TrialStarted>>> trials_start(TrialStartParams p) override;
  awaitable<std::optional<Trial>> trial_find(std::string queue, MessageId id,
                                             long long trial_id) override;
  awaitable<Result<Trial>> trial_update(TrialUpdateParams p) override;
  awaitable<std::vector<Trial>> trials_expire(TrialExpireParams p) override;
  awaitable<std::vector<Message>> messages_reap_expired(ReapParams p) override;
  awaitable<std::optional<MessageEdits>> message_edits(std::string queue, MessageId id,
                                                       long long from, long long count) override;
  awaitable<std::optional<MessageHistory>> message_history(std::string queue, MessageId id,
                                                           HistoryPage page = {}) override;
  awaitable<Schedule> schedule_peek(TimeMs now) override;
  awaitable<std::vector<QueueStats>> queues_page(QueuePageParams p) override;
  awaitable<std::vector<long long>> dead_hourly(std::optional<std::string> queue,
                                                TimeMs from_hour, int hours) override;
  awaitable<std::vector<QueueStats>> queue_stats(std::optional<std::string> queue,
                                                 TimeMs now) override;
  awaitable<bool> ping() override;
  void subscribe_changes(ChangeCallback callback) override;
  awaitable<std::vector<AuditEntry>> audit_list(AuditQuery p) override;
  awaitable<std::vector<long long>> audit_ids(AuditQuery p) override;
  awaitable<std::optional<AuditEntry>> audit_find(long long id) override;
  awaitable<Purged> messages_purge(PurgeParams p) override;
  awaitable<std::vector<Message>> messages_dead(DeadListParams p) override;
  awaitable<std::vector<DeadRef>> messages_dead_refs(DeadListParams p) override;
  awaitable<DeadMatch> dead_match(DeadMatchParams p) override;
  awaitable<bool> batch_preview_save(BatchPreview p) override;
  awaitable<Result<Confirmed>> batch_confirm(ConfirmParams p) override;
  awaitable<Result<Confirmed>> run_start(RunStartParams p) override;
  awaitable<DismissBatch> messages_dismiss_batch(DismissBatchParams p) override;
  awaitable<std::optional<ReplayRun>> replay_run_find(long long id) override;
  awaitable<std::vector<ReplayRun>> replay_runs_list(RunListParams p) override;
  awaitable<RunStep> replay_run_step(RunStepParams p) override;
  awaitable<Result<ReplayRun>> replay_run_change(RunChangeParams p) override;
  awaitable<std::vector<Incident>> incidents_list(IncidentQuery p) override;
  awaitable<std::optional<Incident>> incident_find(std::string fingerprint, TimeMs from_hour,
                                                   int hours) override;
  awaitable<IncidentGauges> incident_gauges(int top) override;
  awaitable<std::optional<IncidentMuted>> incident_mute(IncidentMuteParams p) override;
  awaitable<std::vector<IncidentAlert>> incidents_alert(IncidentAlertParams p) override;
  awaitable<IncidentsPruned> incidents_prune(IncidentPruneParams p) override;
  awaitable<std::vector<UnprintedDead>> incidents_unprinted(MessageId after, int limit) override;
  awaitable<long long> incidents_backfill(std::vector<PrintedDead> rows) override;
  awaitable<Result<std::optional<SqsQueueRow>>> sqs_queue_change(std::string name,
                                                                  DecideSqsQueue decide) override;
  awaitable<std::optional<SqsQueueRow>> sqs_queue_find(std::string name) override;
  awaitable<std::vector<SqsQueueRow>> sqs_queues_page(SqsQueuePage p) override;
  awaitable<bool> sqs_queue_delete(std::string name) override;
  awaitable<std::vector<Message>> sqs_dead_receive(SqsDeadReceive p) override;
  awaitable<bool> sqs_dead_hide(SqsDeadHide p) override;
  awaitable<SqsDeadCounts> sqs_dead_counts(std::string dlq, TimeMs now) override;
  awaitable<long long> dead_count(std::string queue) override;
  void campaign(LeadershipCallback callback) override;
  awaitable<LeadershipRecord> leadership_renew(LeadershipRenewParams p) override;
  const std::string& node_id() const override { return node_; }
  void close() override;

  WriteStats write_stats() const override;
  // Average operations per commit since start (group commit at work).
  double operations_per_commit() const;

 private:
  template <class R, class Fn>
  awaitable<R> write(Fn fn);
  // `settle(sql, result)` completes the result after the group's before_commit (StoreJob::settle).
  template <class R, class Fn, class Settle>
  awaitable<R> write(Fn fn, Settle settle);
  // `prepare(sql)` runs before any job of the group does (StoreJob::prepare).
  template <class R, class Fn, class Settle, class Prepare>
  awaitable<R> write(Fn fn, Settle settle, Prepare prepare);
  template <class R, class Fn>
  awaitable<R> read(Fn fn);

  SqlStoreOptions options_;
  std::string node_;  // this process, in change notifications
  std::unique_ptr<Writer> writer_;
  std::unique_ptr<Readers> readers_;
  std::unique_ptr<PgListener> listener_;
  std::unique_ptr<PgLeader> leader_;
};

}  // namespace dlq::store
