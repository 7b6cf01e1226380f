// Delivering events to their subscribers.
#include "core/events.hpp"

#include <exception>

#include "model/logging.hpp"

namespace dlq::core {

std::string_view to_string(EventKind k) {
  switch (k) {
    case EventKind::enqueued: return "enqueued";
    case EventKind::claimed: return "claimed";
    case EventKind::succeeded: return "succeeded";
    case EventKind::failed: return "failed";
    case EventKind::dead_lettered: return "dead_lettered";
    case EventKind::replayed: return "replayed";
    case EventKind::dismissed: return "dismissed";
    case EventKind::lease_expired: return "lease_expired";
    case EventKind::purged: return "purged";
  }
  return "unknown";
}

std::string_view to_string(ReplayMode m) { return m == ReplayMode::single ? "single" : "batch"; }

void Events::publish(const Event& e) const {
  for (const auto& handler : handlers_) {
    try {
      handler(e);
    } catch (const std::exception& ex) {
      log::error("event subscriber failed", {{"event", std::string(to_string(e.kind))},
                                             {"error", ex.what()}});
    }
  }
}

}  // namespace dlq::core
