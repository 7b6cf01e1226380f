// The messages as they are, read without changing them: pages of a queue, one message, its
// history, the queue a message id lives in, and when the timers must next look (due retries,
// lease expiries). One per connection, on a store thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/store.hpp"

namespace dlq::store {

class Connection;

class MessageReads {
 public:
  explicit MessageReads(Connection& c);
  ~MessageReads();
  MessageReads(const MessageReads&) = delete;
  MessageReads& operator=(const MessageReads&) = delete;

  std::vector<Message> list(const ListParams& p);
  std::vector<MessageId> list_ids(const ListParams& p);
  std::optional<Message> find(const std::string& queue, MessageId id);
  std::optional<std::string> queue_of(MessageId id);
  std::vector<AttemptRecord> attempts(MessageId id, const HistoryPage& page);
  // The message, a page of its history and how many entries it has; none when the id is not in
  // `queue`. Three statements, no snapshot: an entry added between them shows up in the count or
  // on a later page.
  std::optional<MessageHistory> history(const std::string& queue, MessageId id,
                                        const HistoryPage& page);
  // The message and its edited replays from the `from`-th on (at most `count`), oldest first;
  // none when the id is not in `queue`. Two statements, like history().
  std::optional<MessageEdits> edits(const std::string& queue, MessageId id, long long from,
                                    long long count);
  Schedule schedule(TimeMs now);

 private:
  struct Statements;  // message_reads.cpp: each kept statement with its SQL and its binds

  Connection& c_;
  std::unique_ptr<Statements> kept_;
};

}  // namespace dlq::store
