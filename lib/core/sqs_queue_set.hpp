// The SQS front's queue registry as the node holds it: which queues are SQS queues (a lease expiry
// there makes the message visible at once), the VisibilityTimeout stored for them (a claim's
// default lease), their RedrivePolicy (issue 39: where a message dies after maxReceiveCount
// receives), and each registry row, which SQS requests read instead of the database. Kept current
// by the node's own registry changes at once, and by a reload from the database at most once a
// second when an SQS request, a claim or the lease reaper asks (another node's changes).
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "model/time.hpp"
#include "store/store.hpp"

namespace dlq::core {

// A RedrivePolicy as the queue service applies it: the dead-letter queue's name and the receives
// after which a message that would become visible again dies instead.
struct SqsRedrive {
  std::string target;
  int max_receive_count = 0;
};

// One registered queue.
struct SqsQueueInfo {
  std::optional<TimeMs> visibility_ms;
  std::optional<SqsRedrive> redrive;
};

class SqsQueueSet {
 public:
  void put(const store::SqsQueueRow& row);
  void erase(const std::string& name);
  // The whole registry as read at `at`.
  void replace(const std::vector<store::SqsQueueRow>& rows, TimeMs at);
  // The registry row as last loaded or changed here.
  std::optional<store::SqsQueueRow> row(std::string_view name) const;
  bool contains(std::string_view name) const;
  // The queue's entry, when it is registered (one lock for everything a hot path needs).
  std::optional<SqsQueueInfo> find(std::string_view name) const;
  // Whether some registered queue's RedrivePolicy names `dlq` (its receives look for dead
  // letters first).
  bool names_as_target(std::string_view dlq) const;
  // The stored VisibilityTimeout in ms, when the queue has one.
  std::optional<TimeMs> visibility_ms(std::string_view name) const;
  // True, once, when the last reload began a second or more before `now` (or never): the caller
  // reloads. Concurrent callers see false and keep what is loaded.
  bool begin_reload(TimeMs now);

  // The parts of a stored attributes object the service uses (values the front validated).
  static SqsQueueInfo parse(std::string_view attributes);
  // A RedrivePolicy as stored (as SQS keeps it: JSON text naming the target by its ARN, whose
  // last `:` segment is the queue's name); none when it is not one.
  static std::optional<SqsRedrive> parse_redrive(std::string_view policy);

 private:
  struct Entry {
    SqsQueueInfo info;
    store::SqsQueueRow row;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> queues_;
  std::optional<TimeMs> loaded_at_;
};

}  // namespace dlq::core
