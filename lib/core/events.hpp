// An in-process stream of what happened to messages — enqueued, claimed, succeeded, failed, went
// dead, replayed, dismissed, a lease expired, purged — for metrics and alerts to subscribe to
// without the core knowing them.
// Subscribers register before the service starts and run on the publishing thread: they must be
// quick and must not block. The audit log is not fed from here (audit rows are written inside
// the transaction of the change they record).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/message.hpp"

namespace dlq::core {

enum class EventKind {
  enqueued,  // `count` new messages in `queue` (no message)
  claimed,   // `count` messages of `queue` leased (no message)
  succeeded,
  failed,  // every failure, retried or not (a dead one also publishes dead_lettered)
  dead_lettered,
  replayed,
  dismissed,
  lease_expired,
  purged,  // `count` messages of `queue` in `status` deleted (no message)
};
std::string_view to_string(EventKind k);

enum class ReplayMode { single, batch };
std::string_view to_string(ReplayMode m);

struct Event {
  EventKind kind = EventKind::dead_lettered;
  std::string_view queue;
  TimeMs at = 0;
  // The message as it became; none for enqueued, claimed and purged.
  const Message* message = nullptr;
  ReplayMode mode = ReplayMode::single;  // replayed
  std::optional<Status> status;          // purged: the status the messages had
  std::int64_t count = 1;                // enqueued, claimed, purged: how many
  bool by_retention = false;             // purged: by the retention sweep, not an operator
  std::optional<std::string_view> actor;  // who caused it, when a person did
};

class Events {
 public:
  using Handler = std::function<void(const Event&)>;
  // Before start: the list is read without a lock afterwards.
  void subscribe(Handler handler) { handlers_.push_back(std::move(handler)); }
  // Calls every subscriber in order; one that throws is logged and skipped.
  void publish(const Event& e) const;
  bool empty() const { return handlers_.empty(); }

 private:
  std::vector<Handler> handlers_;
};

}  // namespace dlq::core
