// What /metrics serves (http-api.md B5), per node: counters fed by the core's events and by the
// HTTP layer, histograms of request and commit latency, gauges read from the database and the
// process, written in the Prometheus text format 0.0.4. At most metrics.max_queue_labels queues
// get a label of their own; the rest are summed under queue="_other".
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/events.hpp"
#include "core/task_host.hpp"
#include "model/histogram.hpp"
#include "store/store.hpp"

namespace dlq::ops {

// Caps the distinct queue label values: the first `max` queues seen keep their name.
class QueueLabels {
 public:
  explicit QueueLabels(std::size_t max) : max_(max) {}
  std::string label(std::string_view queue);

 private:
  std::size_t max_;
  std::mutex mu_;
  std::unordered_set<std::string> known_;
};

// A counter family: one value per label set.
class Counter {
 public:
  void add(std::vector<std::string> labels, std::uint64_t n = 1);
  std::map<std::vector<std::string>, std::uint64_t> values() const;

 private:
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::uint64_t> values_;
};

// What a scrape reads besides the counters: from the database (cached) and the node.
struct ScrapeInputs {
  std::vector<store::QueueStats> queues;
  store::IncidentGauges incidents;
  TimeMs now = 0;
  std::map<std::string, std::size_t> waiters;  // parked claims per queue
  bool leader = false;
  store::WriteStats writes;
  std::vector<core::TaskStats> tasks;
};

class Metrics {
 public:
  explicit Metrics(std::size_t max_queue_labels);

  // An Events subscriber.
  void record(const core::Event& e);
  // One answered request: route is the route template ("-" for no route).
  void http_request(std::string_view route, std::string_view method, int status,
                    std::chrono::nanoseconds took);
  void alert_sent() { alerts_sent_.add({}); }
  void alert_failed() { alerts_failed_.add({}); }

  std::string exposition(const ScrapeInputs& in);

  // The database's counts for a scrape (messages per queue, the incidents' gauges), kept so that
  // frequent scrapes cost one read per `max_age` (metrics.cache_seconds): the counts kept less
  // than max_age before `now`, or none.
  struct DatabaseCounts {
    std::vector<store::QueueStats> queues;
    store::IncidentGauges incidents;
  };
  std::optional<DatabaseCounts> cached_counts(TimeMs now, TimeMs max_age);
  void keep_counts(DatabaseCounts counts, TimeMs at);

 private:
  Histogram& route_histogram(std::string_view route);

  QueueLabels labels_;
  Counter enqueued_, claimed_, succeeded_, failed_, dead_lettered_, replayed_, replay_outcomes_,
      lease_expiries_, retention_purged_, http_requests_, alerts_sent_, alerts_failed_;
  std::mutex routes_mu_;
  std::map<std::string, std::unique_ptr<Histogram>, std::less<>> route_seconds_;
  std::chrono::system_clock::time_point started_ = std::chrono::system_clock::now();
  std::mutex stats_mu_;
  TimeMs stats_at_ = 0;  // 0: nothing kept yet
  DatabaseCounts stats_;
};

}  // namespace dlq::ops
