// The queue operations as SQL on one connection, with their prepared statements kept for reuse.
// Runs on a store thread; transactions are opened and committed by the caller (CommitQueue).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/connection.hpp"
#include "store/message_row.hpp"
#include "store/store.hpp"

namespace dlq::store {

class Operations {
 public:
  // `node`: this process's id in change notifications (PostgreSQL).
  Operations(Connection& connection, std::string node);
  ~Operations();
  Operations(const Operations&) = delete;
  Operations& operator=(const Operations&) = delete;

  std::vector<Inserted> insert(const InsertParams& p);
  std::vector<Message> list(const ListParams& p);
  std::vector<MessageId> list_ids(const ListParams& p);
  std::optional<Message> find(const std::string& queue, MessageId id);
  std::vector<Message> claim(const ClaimParams& p);
  Result<Message> update(const UpdateParams& p);
  std::vector<Message> reap(const ReapParams& p);
  std::vector<AttemptRecord> attempts(MessageId id);
  std::optional<MessageHistory> history(const std::string& queue, MessageId id);
  LeadershipRecord leadership_renew(const LeadershipRenewParams& p);
  // The audit writer: appends one entry inside the caller's (the change's) transaction.
  void append_audit(const AuditEntry& entry);
  std::vector<AuditEntry> audit_list(const AuditQuery& q);

  Purged purge(const PurgeParams& p);  // purge.cpp

  // The dead-letter desk (desk.cpp).
  std::vector<Message> dead_list(const DeadListParams& p);
  DeadMatch dead_match(const DeadMatchParams& p);
  void preview_save(const BatchPreview& p);
  Result<Confirmed> confirm(const ConfirmParams& p);
  DismissBatch dismiss_batch(const DismissBatchParams& p);
  std::optional<ReplayRun> run_find(long long id);
  std::vector<ReplayRun> runs_list(const RunListParams& p);
  RunStep run_step(const RunStepParams& p);
  Result<ReplayRun> run_change(const RunChangeParams& p);
  Schedule schedule(TimeMs now);
  std::vector<QueueStats> stats(const std::optional<std::string>& queue, TimeMs now);
  // The database answers and carries every migration this build knows.
  bool schema_current();

  // Just before the transaction commits: messages that became due in it are announced to other
  // nodes (PostgreSQL NOTIFY), and the deaths it made are added to dead_letter_hours, in
  // (queue, hour) order so that concurrent transactions lock those rows in one order. A
  // rolled-back change does neither.
  void before_commit();
  void discard_pending() {
    notes_.clear();
    deaths_.clear();
  }
  // GET /dlq/hourly: deaths per hour from `from_hour` on, `hours` of them (one queue or all).
  std::vector<long long> dead_hourly(const std::optional<std::string>& queue, TimeMs from_hour,
                                     int hours);

 private:
  using Binder = void (*)(Operations&, soci::statement&);
  // Prepares `sql` on first use with `bind` registering the buffers below; reuses it after.
  soci::statement& statement(std::optional<soci::statement>& slot, const std::string& sql,
                             Binder bind);
  // Runs a statement whose `into` target is row_, collecting every row.
  std::vector<Message> fetch_messages(soci::statement& st);
  std::optional<Message> fetch_one(soci::statement& st);
  // One INSERT of the buffered new message: its id, or none when its idempotency key is taken.
  std::optional<MessageId> insert_row();
  std::vector<Inserted> insert_many(const InsertParams& p);
  std::vector<Message> claim_in_two_steps(const ClaimParams& p);
  void write_message(const Message& m);
  // PostgreSQL: write_message and one history entry in one statement.
  void write_message_and_history(const Message& m, const AttemptRecord& a);
  static void bind_claim_filter(Operations& o, soci::statement& st);
  void append_history(const std::vector<AttemptRecord>& history);

  void note_due(const Message& m);
  // Counts `next` in dead_letter_hours when this change made it dead.
  void note_death(Status before, const Message& next);

  // The dead messages a filter matches, with their job types, in the action's order.
  std::vector<std::pair<MessageId, std::optional<std::string>>> dead_ids(const DeadFilter& f,
                                                                         bool dead_at_order);
  std::optional<std::string> queue_of(MessageId id);
  // A run as stored; `lock`: FOR UPDATE on PostgreSQL (the writer's transaction on SQLite).
  std::optional<ReplayRun> run_row(long long id, bool lock);
  // Fills succeeded / dead_again / pending from the run's replayed messages as they are now.
  void count_outcomes(ReplayRun& run);

  Connection& c_;
  std::string node_;
  std::map<std::string, TimeMs> notes_;  // queue -> earliest due time (0: now)
  std::map<std::pair<std::string, TimeMs>, long long> deaths_;  // (queue, hour) -> deaths

  // Buffers the prepared statements are bound to (one thread uses them at a time).
  MessageRow row_;
  MessageUpdateRow update_row_;
  AttemptRow attempt_row_;
  std::string in_queue_, in_payload_, in_status_, in_token_, in_jobs_, in_lease_id_,
      in_items_;
  std::optional<std::string> in_key_, in_job_type_, in_worker_;
  std::optional<long long> in_retry_after_;
  long long in_id_ = 0, in_now_ = 0, in_until_ = 0, in_max_retries_ = 0, in_priority_ = 0;
  long long in_limit_ = 0, in_offset_ = 0, in_njobs_ = 0, in_first_at_ = 0;
  std::string out_status_;
  std::optional<long long> out_time_;
  long long out_id_ = 0;

  std::optional<soci::statement> insert_, insert_many_, find_key_holder_, select_, select_locked_,
      update_, update_with_attempt_, key_holders_, claim_, claim_select_, claim_mark_, list_all_,
      list_by_status_, list_ids_all_, list_ids_by_status_, reap_, insert_attempt_, attempts_, next_due_, next_lease_;
};

}  // namespace dlq::store
