// What the queue service must know of the SQS front's queue registry on its hot paths: which
// queues are SQS queues (a lease expiry there makes the message visible at once) and the
// VisibilityTimeout stored for them (a claim's default lease). Kept current by the node's own
// registry changes at once, and by a reload from the database at most once a second when a
// claim or the lease reaper asks (another node's CreateQueue or SetQueueAttributes).
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "model/time.hpp"

namespace dlq::core {

class SqsQueueSet {
 public:
  // `attributes`: the registry row's JSON object of explicitly set attributes.
  void put(const std::string& name, std::string_view attributes);
  void erase(const std::string& name);
  // The whole registry as read at `at` (name -> attributes JSON).
  void replace(const std::map<std::string, std::string>& rows, TimeMs at);
  bool contains(std::string_view name) const;
  // The stored VisibilityTimeout in ms, when the queue has one.
  std::optional<TimeMs> visibility_ms(std::string_view name) const;
  // True, once, when the last reload began a second or more before `now` (or never): the caller
  // reloads. Concurrent callers see false and keep what is loaded.
  bool begin_reload(TimeMs now);

 private:
  static std::optional<TimeMs> parse_visibility(std::string_view attributes);

  mutable std::mutex mutex_;
  std::map<std::string, std::optional<TimeMs>, std::less<>> queues_;
  std::optional<TimeMs> loaded_at_;
};

}  // namespace dlq::core
