// The names of the queues that hold messages (table queue_names, migration 011): what
// limits.max_queues counts and what GET /queues pages through. Enqueue admits a queue's name with
// its first message, purge and retention remove it with the last one, each in the transaction
// of its change. One per connection, on a store thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace dlq::store {

class Connection;

class QueueNamesSql {
 public:
  explicit QueueNamesSql(Connection& c);
  ~QueueNamesSql();
  QueueNamesSql(const QueueNamesSql&) = delete;
  QueueNamesSql& operator=(const QueueNamesSql&) = delete;

  // Before messages of `queue` are inserted in this transaction: the name is kept (added when it
  // is new). False, and nothing written, when it is new and `max_queues` names are kept already
  // (0: no limit). PostgreSQL: the name's row stays key-share locked until the transaction ends,
  // so that no other transaction can remove it meanwhile; new names are admitted one at a time
  // across nodes (an advisory lock), so the count each one sees includes every committed name.
  bool admit(const std::string& queue, long long max_queues);
  // Whether this transaction holds the name already (admitted, or hold() after an INSERT that
  // found and key-share locked the name's row in its own statement, MessageInsertSql's guarded
  // form on PostgreSQL).
  bool holds(const std::string& queue) const { return held_.contains(queue); }
  void hold(const std::string& queue) { held_.insert(queue); }
  // After messages of these queues were deleted in this transaction: removes the names whose
  // queue holds no message any more.
  void remove_emptied(const std::vector<std::string>& queues);
  // Up to `limit` names in byte order, after `after` when given.
  std::vector<std::string> page(const std::optional<std::string>& after, int limit);

  // The transaction is about to commit, or was rolled back.
  void end_transaction();

 private:
  struct Statements;

  bool lookup(const std::string& queue);

  Connection& c_;
  std::unique_ptr<Statements> kept_;
  // Names this transaction holds: found (PostgreSQL: and key-share locked) or added by it.
  std::unordered_set<std::string> held_;
  std::unordered_set<std::string> added_;  // added by this transaction (not committed yet)
  // SQLite only: names known to be committed. The writer's connection is the only one that
  // changes queue_names (one process owns the file, one thread writes), so a name it found in
  // the table, committed before the transaction began (not in added_), stays there until this
  // connection removes it, which drops it from here first. A rollback cannot take such a name
  // away, so nothing here depends on how the transaction ends.
  std::unordered_set<std::string> known_;
};

}  // namespace dlq::store
