// PostgreSQL: the messages a commit group's acknowledgements change, handled as one set. The rows
// its jobs will lock are locked and read in one statement, and the transitions they leave for the
// group's end are written in one statement, each row with its history entry
// (docs/architecture.md, "set-based acknowledgements"). One per connection, owned by MessageSql,
// which decides what may wait; the caller opens and commits transactions.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "store/store.hpp"

namespace dlq::store {

class Connection;

class MessageGroupSql {
 public:
  // `write_one`: how a single waiting transition is written (its own kept statement: one row
  // gains nothing from the group's).
  using WriteOne = std::function<void(const Message&, const AttemptRecord&)>;
  MessageGroupSql(Connection& c, WriteOne write_one);
  ~MessageGroupSql();
  MessageGroupSql(const MessageGroupSql&) = delete;
  MessageGroupSql& operator=(const MessageGroupSql&) = delete;

  // A job of the group will lock message `id` (StoreJob::prepare).
  void name(MessageId id) { named_.insert(id); }
  // The row of a named message as the group's statement read it (the first take() of the group
  // locks and reads every named one); none when `id` was not named, is the only one named, or
  // was not found (the caller locks it alone). Taken once.
  std::optional<Message> take(MessageId id);
  // Message `id` is written now: its copy is stale.
  void forget(MessageId id) { held_.erase(id); }
  // The copies of all rows are stale (another job may change them its own way).
  void forget_all();

  // A transition left for the group's end (write_waiting), after those before it.
  void leave(const Message& m, const AttemptRecord& a);
  bool waits(MessageId id) const { return waiting_ids_.count(id) > 0; }
  // Writes what waits, in the order left.
  void write_waiting();

  // The transaction ended: nothing is named, held or waits.
  void clear();

 private:
  struct Statements;  // message_group_sql.cpp: each kept statement with its SQL and its binds

  void lock_named();

  Connection& c_;
  WriteOne write_one_;
  std::unique_ptr<Statements> kept_;
  std::set<MessageId> named_;          // name(), not yet taken
  std::map<MessageId, Message> held_;  // locked and read by lock_named(), not yet taken
  bool held_current_ = false;          // held_ is as the rows are now
  std::vector<std::pair<Message, AttemptRecord>> waiting_;  // leave(), in order
  std::set<MessageId> waiting_ids_;                         // an index over waiting_ for waits()
};

}  // namespace dlq::store
