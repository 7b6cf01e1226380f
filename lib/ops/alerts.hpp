// Alerts (http-api.md B5): a webhook POST when messages go dead — aggregated per queue and sent
// at most once per alerts.min_interval_seconds per node — and when a queue's dead-letter depth or
// oldest-dead age crosses its threshold or clears it (checked by the leader only); with
// alerts.on_new_incident, when an incident opens or its dead reach a power of ten (the leader,
// what was told kept in the incidents table, so a new leader does not tell it again). Never the
// payload. Bodies wait in a bounded outbox and are delivered by a task of their own with retries
// and backoff, so nothing here ever blocks or slows a request.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "core/events.hpp"
#include "core/queue_service.hpp"
#include "core/task_host.hpp"
#include "ops/metrics.hpp"
#include "ops/webhook.hpp"

namespace dlq::ops {

// The dead letters of each queue since its last alert, and the rule that alerts a queue at most
// once per alerts.min_interval_seconds (its first alert at once). Not thread-safe (Alerts locks).
class DeadLetterDigest {
 public:
  DeadLetterDigest(TimeMs min_interval_ms, std::string node);
  void record(std::string_view queue, const Message& m, TimeMs at);
  // The alert bodies due at `now`: one per queue with dead letters whose interval has passed
  // since its last alert. Those queues start counting afresh.
  std::vector<std::string> take_due(TimeMs now);

 private:
  struct DeadMessage {
    MessageId id = 0;
    std::optional<std::string> job_type;
    int attempts = 0;
    std::optional<ErrorClass> error_class;
    std::optional<DeadReason> dead_reason;
    TimeMs dead_at = 0;
  };
  struct Aggregate {
    long long count = 0;
    TimeMs first_at = 0;
    TimeMs last_at = 0;
    std::vector<DeadMessage> messages;  // the first ten
  };

  TimeMs min_interval_ms_;
  std::string node_;
  std::map<std::string, Aggregate> dead_;    // per queue, since its last alert
  std::map<std::string, TimeMs> last_sent_;  // per queue
};

class Alerts {
 public:
  // Throws for a webhook URL or CA file it cannot use (at start-up: a config error).
  Alerts(const Config& config, Metrics& metrics, std::string node);
  ~Alerts();

  bool enabled() const { return webhook_ != nullptr; }
  // An Events subscriber: remembers dead letters for the next aggregated alert.
  void record(const core::Event& e);
  // Every node: sends the dead-letter aggregates that are due and delivers the outbox.
  core::TaskSpec delivery_task();
  // The leader: compares each queue's dead depth and oldest-dead age with its thresholds.
  core::TaskSpec threshold_task(core::QueueService& service);
  // The leader: incident_opened / incident_grew for the incidents due (store::IncidentAlertParams).
  // Runs whatever the config: with the events off it marks what incidents reach as told, so that
  // turning them on tells of what happens from then on, not of every incident open before.
  core::TaskSpec incident_task(store::Store& store);

  std::size_t outbox_size();

 private:
  struct Outgoing {
    std::string body;
    int failures = 0;
    TimeMs next_at = 0;
  };

  boost::asio::awaitable<void> deliver(const core::TaskContext& ctx);
  void flush_due(TimeMs now);
  void enqueue(std::string body, TimeMs now);
  void check_thresholds(const std::vector<store::QueueStats>& stats, TimeMs now);
  bool incident_events() const { return webhook_ && config_.alerts.on_new_incident; }

  const Config& config_;
  Metrics& metrics_;
  std::string node_;
  std::unique_ptr<Webhook> webhook_;

  std::mutex mu_;
  DeadLetterDigest digest_;
  std::deque<Outgoing> outbox_;
  // Threshold state, owned by the leader's task: (queue, metric) currently over its threshold.
  std::map<std::pair<std::string, std::string>, bool> crossed_;
};

}  // namespace dlq::ops
