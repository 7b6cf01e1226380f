// Enqueue: new messages and the holders of their idempotency keys. One per connection, on a
// store thread, owned by MessageSql (which announces the new messages before the commit); the
// caller opens and commits transactions.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/store.hpp"

namespace dlq::store {

class Connection;
class QueueNamesSql;

class MessageInsertSql {
 public:
  MessageInsertSql(Connection& c, QueueNamesSql& names);
  ~MessageInsertSql();
  MessageInsertSql(const MessageInsertSql&) = delete;
  MessageInsertSql& operator=(const MessageInsertSql&) = delete;

  // A queue's first message admits its name (QueueNamesSql::admit); a name over
  // p.max_queues is a validation error on `queue` (code `limit`) and stores nothing.
  Result<std::vector<Inserted>> insert(const InsertParams& p);

  // An enqueue whose answer is taken after flush(), in the order they came (take()). PostgreSQL,
  // a request without idempotency keys: it waits, and flush() stores every waiting request of
  // the transaction in one statement (docs/performance.md). Otherwise: insert() at once.
  // `created` learns each new message, now or in flush().
  void insert_later(InsertParams p, const std::function<void(const Message&)>& created);
  // Whether insert_later(p) waits for flush() (else it reads and writes at once).
  bool waits(const InsertParams& p) const;
  // Just before the commit: stores the waiting requests; `created` learns each new message.
  void flush(const std::function<void(const Message&)>& created);
  // The oldest request's answer (after flush()).
  Result<std::vector<Inserted>> take();
  // The transaction was rolled back: nothing waits, nothing is answered.
  void discard();

 private:
  Result<std::vector<Inserted>> insert_rows(const InsertParams& p);
  // SendMessage's MessageAttributes, on the rows this transaction just inserted (rare: only SQS
  // messages that carry attributes pay the extra statement).
  void store_sqs_attributes(const InsertParams& p, std::vector<Inserted>& rows);

 private:
  struct Statements;  // message_insert_sql.cpp: each kept statement with its SQL and its binds

  // One INSERT of a new message: its id, or none when its idempotency key is taken or, `guarded`
  // (PostgreSQL), when the queue's name is not kept yet.
  std::optional<MessageId> insert_row(const std::string& queue, const NewMessage& m, TimeMs now,
                                      bool guarded);
  std::optional<Message> key_holder(const std::string& queue, const std::string& key);
  // A request of insert_later and, once stored, its answer.
  struct Block {
    InsertParams params;
    std::optional<Result<std::vector<Inserted>>> result;
  };
  // One INSERT of every message of `waiting`: the (id, queue) of each stored row, ids ascending.
  // `guarded`: a queue whose name is not kept yet stores nothing.
  std::vector<std::pair<MessageId, std::string>> store_waiting(const std::vector<Block*>& waiting,
                                                               bool guarded);
  void answer_waiting(const std::vector<Block*>& waiting,
                      const std::vector<std::pair<MessageId, std::string>>& rows,
                      const std::function<void(const Message&)>& created);

  Connection& c_;
  QueueNamesSql& names_;
  std::unique_ptr<Statements> kept_;
  std::deque<Block> blocks_;  // insert_later's requests, oldest first
};

}  // namespace dlq::store
