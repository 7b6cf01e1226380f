// Enqueue: new messages and the holders of their idempotency keys. One per connection, on a
// store thread, owned by MessageSql (which announces the new messages before the commit); the
// caller opens and commits transactions.
#pragma once

#include <memory>
#include <optional>
#include <string>
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

 private:
  Result<std::vector<Inserted>> insert_rows(const InsertParams& p);
  // SendMessage's MessageAttributes, on the rows this transaction just inserted (rare: only SQS
  // messages that carry attributes pay the extra statement).
  void store_sqs_attributes(const InsertParams& p, std::vector<Inserted>& rows);

 public:

 private:
  struct Statements;  // message_insert_sql.cpp: each kept statement with its SQL and its binds

  // One INSERT of a new message: its id, or none when its idempotency key is taken or, `guarded`
  // (PostgreSQL), when the queue's name is not kept yet.
  std::optional<MessageId> insert_row(const std::string& queue, const NewMessage& m, TimeMs now,
                                      bool guarded);
  std::optional<Message> key_holder(const std::string& queue, const std::string& key);
  // PostgreSQL: a keyless batch in one statement; `guarded`: none when the name is not kept yet.
  std::vector<Inserted> insert_many(const InsertParams& p, bool guarded);

  Connection& c_;
  QueueNamesSql& names_;
  std::unique_ptr<Statements> kept_;
};

}  // namespace dlq::store
