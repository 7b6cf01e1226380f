// The messages that change: enqueue (MessageInsertSql), each transition a worker, the reaper or an operator makes
// (with its history entry and audit entry), and what a transaction announces just before it
// commits (claims are ClaimSql's). One per connection, on a store thread; the caller opens and
// commits transactions.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/message_insert_sql.hpp"
#include "store/store.hpp"

namespace dlq::store {

class AuditSql;
class Connection;
class EffectSql;
class IncidentSql;
class MessageGroupSql;
class QueueNamesSql;

class MessageSql {
 public:
  // `node`: this process's id in change notifications (PostgreSQL).
  MessageSql(Connection& c, AuditSql& audit, QueueNamesSql& names, IncidentSql& incidents,
             EffectSql& effects, std::string node);
  ~MessageSql();
  MessageSql(const MessageSql&) = delete;
  MessageSql& operator=(const MessageSql&) = delete;

  // Enqueue (MessageInsertSql::insert_later): on PostgreSQL a request without idempotency keys
  // is stored with the transaction's other such requests just before the commit, so its answer
  // is taken after before_commit(), with take_inserted() (the oldest request's first). The new
  // messages are announced before the commit.
  void insert_later(InsertParams p);
  Result<std::vector<Inserted>> take_inserted() { return inserts_.take(); }
  // Reads the message under a lock, lets p.decide compute the transition, writes it with its
  // history and audit entry.
  Result<Message> update(const UpdateParams& p);
  std::vector<Message> reap(const ReapParams& p);
  // The message, its row locked until the transaction ends; none when it is not in `queue`.
  std::optional<Message> lock(const std::string& queue, MessageId id);
  // PostgreSQL: a job of the group will lock message `id` (StoreJob::prepare). The first lock()
  // of such a message locks and reads every one named, in one statement, and keeps the rows for
  // their own lock(); a transition that writes a row drops its copy.
  void lock_later(MessageId id);
  // The next job may read or change any message row its own way: the transitions update() left
  // for the group's end are written now and the copies of rows locked ahead are dropped (read
  // again at the next lock()).
  void catch_up();
  // The writer says which kind of job runs next: one that reads and changes message rows only
  // through MessageSql (StoreJob::prepare said so) leaves its usual transitions for the group's
  // end; any other is caught up with first, and its own transitions are written at once (it may
  // read them back its own way).
  void start_job(bool through_messages);
  // One history entry of `m` that changes nothing else (a trial's end), in m's current life.
  void append_entry(const Message& m, AttemptRecord entry);
  // A claim that asked for trials may take something of `queue` now: announced to other nodes
  // at commit (PostgreSQL NOTIFY), as a message that became due is.
  void note_work(const std::string& queue);

  // Just before the transaction commits: the waiting enqueues are stored, then messages that
  // became due in it are announced to other
  // nodes (PostgreSQL NOTIFY), and the deaths it made are added to dead_letter_hours, in
  // (queue, hour) order so that concurrent transactions lock those rows in one order. A
  // rolled-back change does neither.
  void before_commit();
  void discard_pending();

 private:
  struct Statements;  // message_sql.cpp: each kept statement with its SQL and its binds

  static void stamp_life(Change& change);
  void write(const Message& m);
  // PostgreSQL: write() and one history entry in one statement.
  void write_with_history(const Message& m, const AttemptRecord& a);
  void append_history(const std::vector<AttemptRecord>& history);
  // The message's latest history entry and its row id; fold_into rewrites that row.
  std::optional<std::pair<long long, AttemptRecord>> last_entry(MessageId id);
  void fold_into(long long entry_id, const AttemptRecord& a);
  std::vector<Status> other_key_holders(const Message& m);

  void end_transaction();

  void note_due(const Message& m);
  // Counts `next` in dead_letter_hours when this change made it dead, and tells its incident
  // (IncidentSql) that it joined or left.
  void note_death(const Message& before, const Message& next);

  Connection& c_;
  AuditSql& audit_;
  IncidentSql& incidents_;
  EffectSql& effects_;
  MessageInsertSql inserts_;
  // PostgreSQL: the rows named by lock_later() and the transitions left for the group's end.
  std::unique_ptr<MessageGroupSql> group_;
  std::string node_;
  std::unique_ptr<Statements> kept_;
  bool writes_later_ = false;  // start_job(): the job running may leave transitions to the group
  std::map<std::string, TimeMs> notes_;  // queue -> earliest due time (0: now)
  std::map<std::pair<std::string, TimeMs>, long long> deaths_;  // (queue, hour) -> deaths
};

}  // namespace dlq::store
