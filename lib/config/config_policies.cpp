// A queue's effective policy: its own values merged over the configuration's defaults.
#include <algorithm>

#include "config/config.hpp"

namespace dlq {

const QueuePolicy& Config::policy_for(std::string_view queue) const {
  auto it = queues.find(queue);
  return it == queues.end() ? defaults : it->second;
}

RetentionPolicy Config::retention_for(std::string_view queue) const {
  RetentionPolicy r = retention;
  auto it = queues.find(queue);
  if (it == queues.end()) return r;
  const auto& o = it->second.retention;
  if (o.succeeded_seconds) r.succeeded_seconds = *o.succeeded_seconds;
  if (o.dead_seconds) r.dead_seconds = *o.dead_seconds;
  if (o.dismissed_seconds) r.dismissed_seconds = *o.dismissed_seconds;
  return r;
}

AlertThresholds Config::alerts_for(std::string_view queue) const {
  AlertThresholds a = alerts;
  auto it = queues.find(queue);
  if (it == queues.end()) return a;
  const auto& o = it->second.alerts;
  if (o.dead_depth) a.dead_depth = *o.dead_depth;
  if (o.oldest_dead_age_seconds) a.oldest_dead_age_seconds = *o.oldest_dead_age_seconds;
  return a;
}

int Config::max_replays_for(std::string_view queue,
                            const std::optional<std::string>& job_type) const {
  int limit = policy_for(queue).max_replays;
  if (!job_type) return limit;
  auto it = job_types.find(*job_type);
  if (it == job_types.end() || it->second.max_replays == 0) return limit;
  return limit == 0 ? it->second.max_replays : std::min(limit, it->second.max_replays);
}

}  // namespace dlq
