// Alert bodies, their aggregation, the threshold checks and the delivery with retries.
#include "ops/alerts.hpp"

#include <algorithm>

#include <boost/asio/this_coro.hpp>
#include <boost/json.hpp>

#include "core/desk.hpp"
#include "model/logging.hpp"

namespace dlq::ops {
namespace json = boost::json;

namespace {

constexpr std::size_t kOutboxLimit = 1000;
constexpr std::size_t kMessagesPerAlert = 10;
constexpr int kAttempts = 6;  // then the alert is dropped (and was counted failed each time)
constexpr TimeMs kFirstRetryMs = 1000;
constexpr TimeMs kDeliveryIntervalMs = 250;
constexpr TimeMs kThresholdIntervalMs = 5000;
constexpr int kIncidentAlertsPerCheck = 100;

json::value time_or_null(std::optional<TimeMs> t) {
  if (!t) return nullptr;
  return json::value(format_rfc3339(*t));
}

// An incident event's body: the entry's members that say what and where, never a payload.
std::string incident_body(const store::IncidentAlert& a, const std::string& node) {
  const store::Incident& i = a.incident;
  json::array job_types, samples;
  if (i.job_type) job_types.emplace_back(*i.job_type);
  for (auto id : i.sample_ids) samples.emplace_back(id);
  json::object queues;
  for (const auto& [queue, n] : i.queues) queues[queue] = n;
  json::object body{
      {"event", a.threshold ? "incident_grew" : "incident_opened"},
      {"fingerprint", i.fingerprint},
      {"title", i.title},
      {"error_class", i.error_class ? json::value(to_string(*i.error_class)) : json::value(nullptr)},
      {"job_types", std::move(job_types)},
      {"queues", std::move(queues)},
      {"dead", i.dead},
      {"threshold", a.threshold ? json::value(*a.threshold) : json::value(nullptr)},
      {"first_dead_at", time_or_null(i.first_dead_at)},
      {"last_dead_at", time_or_null(i.last_dead_at)},
      {"sample_ids", std::move(samples)},
      {"node", node}};
  return json::serialize(body);
}

}  // namespace

DeadLetterDigest::DeadLetterDigest(TimeMs min_interval_ms, std::string node)
    : min_interval_ms_(min_interval_ms), node_(std::move(node)) {}

void DeadLetterDigest::record(std::string_view queue, const Message& m, TimeMs at) {
  Aggregate& a = dead_[std::string(queue)];
  if (a.count == 0) a.first_at = at;
  a.last_at = std::max(a.last_at, at);
  ++a.count;
  if (a.messages.size() < kMessagesPerAlert) {
    a.messages.push_back({m.id, m.job_type, m.attempts, m.error_class, m.dead_reason, at});
  }
}

std::vector<std::string> DeadLetterDigest::take_due(TimeMs now) {
  std::vector<std::string> bodies;
  for (auto it = dead_.begin(); it != dead_.end();) {
    auto sent = last_sent_.find(it->first);
    if (sent != last_sent_.end() && now - sent->second < min_interval_ms_) {
      ++it;
      continue;
    }
    const Aggregate& a = it->second;
    json::array messages;
    for (const auto& m : a.messages) {
      messages.push_back(json::object{
          {"id", m.id},
          {"job_type", m.job_type ? json::value(*m.job_type) : json::value(nullptr)},
          {"attempts", m.attempts},
          {"error_class", m.error_class ? json::value(to_string(*m.error_class)) : json::value(nullptr)},
          {"dead_reason", m.dead_reason ? json::value(to_string(*m.dead_reason)) : json::value(nullptr)},
          {"dead_at", format_rfc3339(m.dead_at)}});
    }
    json::object body{{"event", "dead_lettered"}, {"queue", it->first},      {"count", a.count},
                      {"messages", std::move(messages)}, {"threshold", nullptr},
                      {"value", nullptr},               {"first_at", format_rfc3339(a.first_at)},
                      {"last_at", format_rfc3339(a.last_at)}, {"node", node_}};
    bodies.push_back(json::serialize(body));
    last_sent_[it->first] = now;
    it = dead_.erase(it);
  }
  return bodies;
}

Alerts::Alerts(const Config& config, Metrics& metrics, std::string node)
    : config_(config),
      metrics_(metrics),
      node_(node),
      digest_(seconds_to_ms(config.alerts.min_interval_seconds), std::move(node)) {
  if (config.alerts.webhook_url.empty()) return;
  webhook_ = std::make_unique<Webhook>(
      config.alerts.webhook_url, config.alerts.ca_file,
      std::chrono::milliseconds(seconds_to_ms(config.alerts.timeout_seconds)));
}

Alerts::~Alerts() = default;

std::size_t Alerts::outbox_size() {
  std::lock_guard lock(mu_);
  return outbox_.size();
}

void Alerts::record(const core::Event& e) {
  if (!webhook_ || e.kind != core::EventKind::dead_lettered || !e.message) return;
  std::lock_guard lock(mu_);
  digest_.record(e.queue, *e.message, e.at);
}

// Under mu_. An outbox that is full drops its oldest alert rather than grow.
void Alerts::enqueue(std::string body, TimeMs now) {
  if (outbox_.size() >= kOutboxLimit) {
    outbox_.pop_front();
    metrics_.alert_failed();
    log::warn("alert outbox full; the oldest alert was dropped");
  }
  outbox_.push_back({std::move(body), 0, now});
}

// Under mu_: every queue's aggregate whose interval has passed becomes one alert.
void Alerts::flush_due(TimeMs now) {
  for (auto& body : digest_.take_due(now)) enqueue(std::move(body), now);
}

boost::asio::awaitable<void> Alerts::deliver(const core::TaskContext& ctx) {
  auto ex = co_await boost::asio::this_coro::executor;
  for (;;) {
    TimeMs now = ctx.now();
    std::optional<Outgoing> next;
    {
      std::lock_guard lock(mu_);
      flush_due(now);
      if (!outbox_.empty() && outbox_.front().next_at <= now) {
        next = std::move(outbox_.front());
        outbox_.pop_front();
      }
    }
    if (!next || ctx.stopping()) co_return;
    std::string error;
    try {
      co_await webhook_->post(ex, next->body);
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (error.empty()) {
      metrics_.alert_sent();
      continue;
    }
    metrics_.alert_failed();
    if (++next->failures >= kAttempts) {
      log::error("alert dropped after repeated delivery failures",
                 {{"host", webhook_->host()}, {"error", error}});
      continue;
    }
    TimeMs delay = kFirstRetryMs << (next->failures - 1);
    log::warn("alert delivery failed; retrying",
              {{"host", webhook_->host()}, {"error", error}, {"retry_in_ms", std::to_string(delay)}});
    next->next_at = ctx.now() + delay;
    std::lock_guard lock(mu_);
    outbox_.push_front(std::move(*next));  // order kept: it goes first once due
    co_return;  // back on the next tick: a receiver that is down is not hammered
  }
}

core::TaskSpec Alerts::delivery_task() {
  core::TaskSpec spec;
  spec.name = "alerts";
  spec.scope = core::TaskScope::every_node;
  spec.interval_ms = kDeliveryIntervalMs;
  spec.body = [this](const core::TaskContext& ctx) -> boost::asio::awaitable<void> {
    co_await deliver(ctx);
  };
  return spec;
}

// The leader alone: each (queue, metric) is crossed when its value reaches the threshold, and
// cleared when it falls below again; one alert per change.
void Alerts::check_thresholds(const std::vector<store::QueueStats>& stats, TimeMs now) {
  std::map<std::pair<std::string, std::string>, bool> seen;
  auto check = [&](const store::QueueStats& s, const char* metric, double limit, double value) {
    auto key = std::pair{s.queue, std::string(metric)};
    bool over = limit > 0 && value >= limit;
    bool was = crossed_[key];
    seen[key] = true;
    if (over == was) return;
    crossed_[key] = over;
    json::object body{{"event", over ? "threshold_crossed" : "threshold_cleared"},
                      {"queue", s.queue},
                      {"count", s.dead},
                      {"messages", json::array{}},
                      {"metric", metric},
                      {"threshold", core::json_number(limit)},
                      {"value", core::json_number(value)},
                      {"first_at", time_or_null(s.oldest_dead_at)},
                      {"last_at", format_rfc3339(now)},
                      {"node", node_}};
    enqueue(json::serialize(body), now);
  };
  std::lock_guard lock(mu_);
  for (const auto& s : stats) {
    auto t = config_.alerts_for(s.queue);
    double age = s.oldest_dead_at ? static_cast<double>(std::max<TimeMs>(0, now - *s.oldest_dead_at)) / 1000 : 0;
    check(s, "dead_depth", t.dead_depth, static_cast<double>(s.dead));
    check(s, "oldest_dead_age_seconds", t.oldest_dead_age_seconds, std::floor(age));
  }
  // A queue with no messages at all any more has nothing dead: clear what was crossed there.
  std::vector<std::string> gone;
  for (const auto& [key, over] : crossed_) {
    if (over && !seen.contains(key) && std::find(gone.begin(), gone.end(), key.first) == gone.end()) {
      gone.push_back(key.first);
    }
  }
  for (const auto& queue : gone) {
    store::QueueStats empty;
    empty.queue = queue;
    auto t = config_.alerts_for(queue);
    check(empty, "dead_depth", t.dead_depth, 0);
    check(empty, "oldest_dead_age_seconds", t.oldest_dead_age_seconds, 0);
  }
}

core::TaskSpec Alerts::threshold_task(core::QueueService& service) {
  core::TaskSpec spec;
  spec.name = "alert-thresholds";
  spec.scope = core::TaskScope::leader_only;
  spec.interval_ms = kThresholdIntervalMs;
  spec.body = [this, &service](const core::TaskContext& ctx) -> boost::asio::awaitable<void> {
    core::RequestContext rc;
    rc.now = ctx.now();
    auto stats = co_await service.stats(rc, std::nullopt);
    if (ctx.leading()) check_thresholds(stats, ctx.now());
  };
  return spec;
}

core::TaskSpec Alerts::incident_task(store::Store& store) {
  core::TaskSpec spec;
  spec.name = "alert-incidents";
  spec.scope = core::TaskScope::leader_only;
  spec.interval_ms = kThresholdIntervalMs;
  spec.body = [this, &store](const core::TaskContext& ctx) -> boost::asio::awaitable<void> {
    store::IncidentAlertParams p;
    p.now = ctx.now();
    p.sent_before = p.now - seconds_to_ms(config_.alerts.min_interval_seconds);
    p.send = incident_events();
    p.limit = kIncidentAlertsPerCheck;
    p.from_hour = core::incident_hours_from(p.now);
    p.hours = core::kIncidentHours;
    auto due = co_await store.incidents_alert(p);
    if (due.empty()) co_return;
    std::lock_guard lock(mu_);
    for (const auto& a : due) enqueue(incident_body(a, node_), p.now);
  };
  return spec;
}

}  // namespace dlq::ops
