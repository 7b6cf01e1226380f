// The SQS front's queue registry (table sqs_queues, migration 019). Rare statements (queue
// administration, and a read per SQS request's queue): plain statements with named binds, not
// kept prepared.
#pragma once

#include "store/store.hpp"

namespace dlq::store {

class Connection;

class SqsQueueSql {
 public:
  explicit SqsQueueSql(Connection& c) : c_(c) {}

  Result<std::optional<SqsQueueRow>> change(const std::string& name, const DecideSqsQueue& decide);
  std::optional<SqsQueueRow> find(const std::string& name);
  std::vector<SqsQueueRow> page(const SqsQueuePage& p);
  bool remove(const std::string& name);
  long long dead_count(const std::string& queue);
  // The dead-letter queue's view of the dead letters stamped with it (issue 39).
  std::vector<Message> dead_receive(const SqsDeadReceive& p);
  bool dead_hide(const SqsDeadHide& p);
  SqsDeadCounts dead_counts(const std::string& dlq, TimeMs now);

 private:
  // PostgreSQL: FOR UPDATE, so that two CreateQueues of one name decide one after the other.
  std::optional<SqsQueueRow> find_locked(const std::string& name, bool lock);

  Connection& c_;
};

}  // namespace dlq::store
