// The operational routes: queue stats, metrics, health and readiness.
#include <boost/json.hpp>

#include "http/api.hpp"
#include "http/api_support.hpp"

namespace dlq::http {
namespace json = boost::json;
using namespace support;

namespace {

json::value age_seconds(const std::optional<TimeMs>& since, TimeMs now) {
  if (!since) return nullptr;
  return std::max<TimeMs>(0, now - *since) / kMillisPerSecond;
}

json::object stats_json(const store::QueueStats& s, TimeMs now) {
  json::object o;
  o["queue"] = s.queue;
  o["ready"] = s.ready;
  o["scheduled"] = s.scheduled;
  o["processing"] = s.processing;
  o["succeeded"] = s.succeeded;
  o["dead"] = s.dead;
  o["dismissed"] = s.dismissed;
  o["oldest_ready_age_seconds"] = age_seconds(s.oldest_ready_since, now);
  o["oldest_dead_age_seconds"] = age_seconds(s.oldest_dead_at, now);
  return o;
}

}  // namespace

Api::R Api::queues(const Request& req, const RouteMatch&) {
  auto ctx = request_context(config_, service_.clock(), req);
  auto all = co_await service_.stats(ctx, std::nullopt);
  json::array items;
  for (const auto& s : all) items.push_back(stats_json(s, ctx.now));
  json::object body;
  body["queues"] = std::move(items);
  co_return json_response(200, body);
}

Api::R Api::queue_stats(const Request& req, const RouteMatch& m) {
  auto queue = queue_param(m.params.at(0));
  if (!queue) co_return unknown_queue(config_, req);
  auto ctx = request_context(config_, service_.clock(), req);
  auto one = co_await service_.stats(ctx, *queue);
  co_return json_response(200, stats_json(one.at(0), ctx.now));
}

// Prometheus text format. The first metrics of B5: how group commit groups, parked claims,
// whether this node leads, and how its background tasks fare.
Api::R Api::metrics(const Request&, const RouteMatch&) {
  auto writes = service_.write_stats();
  std::string body;
  auto metric = [&body](const char* name, const char* type, const char* help, double value) {
    body += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" +
            name + " " + std::to_string(static_cast<long long>(value)) + "\n";
  };
  metric("dlq_store_commits_total", "counter", "Write transactions committed.",
         static_cast<double>(writes.commits));
  metric("dlq_store_operations_total", "counter",
         "Write operations applied; several share one commit (group commit).",
         static_cast<double>(writes.operations));
  metric("dlq_long_poll_waiters", "gauge", "Claims parked waiting for work right now.",
         static_cast<double>(service_.waiting_claimers()));
  metric("dlq_leader", "gauge", "1 on the node that leads its database (leader-only tasks run here).",
         tasks_.leader() ? 1 : 0);
  auto tasks = tasks_.stats();
  auto task_series = [&body, &tasks](const char* name, const char* help, auto value) {
    body += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n";
    for (const auto& t : tasks) {
      body += std::string(name) + "{task=\"" + t.name + "\"} " + std::to_string(value(t)) + "\n";
    }
  };
  task_series("dlq_task_runs_total", "Background task bodies finished, successfully or not.",
              [](const core::TaskStats& t) { return t.runs; });
  task_series("dlq_task_failures_total", "Background task bodies that failed (each is retried).",
              [](const core::TaskStats& t) { return t.failures; });
  Response r;
  r.content_type = "text/plain; version=0.0.4";
  r.body = std::move(body);
  co_return r;
}

Api::R Api::healthz(const Request&, const RouteMatch&) {
  json::object body;
  body["status"] = "ok";
  co_return json_response(200, body);
}

Api::R Api::readyz(const Request& req, const RouteMatch&) {
  bool ready = co_await service_.ready();
  if (!ready) {
    co_return problem(context(config_, req), 503, "database-unavailable", "Not ready",
                      "the database is unreachable or its schema is not current", "not ready");
  }
  json::object body;
  body["status"] = "ready";
  co_return json_response(200, body);
}

}  // namespace dlq::http
