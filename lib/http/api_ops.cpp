// The operational routes: queue stats, metrics, health, readiness, the OpenAPI document, purge,
// and who the caller is (GET /whoami).
#include "http/api_ops.hpp"

#include <boost/json.hpp>

#include "core/retention.hpp"
#include "http/api_support.hpp"
#include "http/openapi.hpp"

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

OpsHandlers::OpsHandlers(core::QueueService& service, store::Store& store,
                         const core::TaskHost& tasks, ops::Metrics& metrics, const Config& config)
    : service_(service), store_(store), tasks_(tasks), metrics_(metrics), config_(config) {}

// A page by name: one queue more than `limit` is read to know whether another page follows.
OpsHandlers::R OpsHandlers::queues(const Request& req, const RouteMatch&) {
  core::QueuesQuery query;
  FieldErrors errors = core::decode_queues(req.query, query);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  auto ctx = request_context(config_, service_.clock(), req);
  // The name moved out first: g++ 12 mishandles temporaries holding strings inside co_await.
  std::optional<std::string> after = std::move(query.after);
  auto page = co_await service_.queues_page(ctx, std::move(after), query.limit + 1);
  json::value next = trim_page(page, query.limit,
                               [](const store::QueueStats& s) { return json::value(s.queue); });
  json::array items;
  for (const auto& s : page) items.push_back(stats_json(s, ctx.now));
  json::object body;
  body["queues"] = std::move(items);
  body["next_after"] = std::move(next);
  co_return json_response(200, body);
}

OpsHandlers::R OpsHandlers::queue_stats(const Request& req, const RouteMatch& m) {
  auto queue = queue_param(m.params.at(0));
  if (!queue) co_return unknown_queue(config_, req);
  auto ctx = request_context(config_, service_.clock(), req);
  auto one = co_await service_.stats(ctx, *queue);
  co_return json_response(200, stats_json(one.at(0), ctx.now));
}

// Prometheus text format: B5's series (ops/metrics.cpp). Message counts come from the database
// at most metrics.cache_seconds old, so frequent scrapes cost one query a second.
OpsHandlers::R OpsHandlers::metrics(const Request& req, const RouteMatch&) {
  auto ctx = request_context(config_, service_.clock(), req);
  const TimeMs max_age = seconds_to_ms(config_.metrics.cache_seconds);
  ops::ScrapeInputs in;
  auto cached = metrics_.cached_counts(ctx.now, max_age);
  if (!cached) {
    cached.emplace();
    cached->queues = co_await service_.stats(ctx, std::nullopt);
    cached->incidents = co_await store_.incident_gauges(config_.metrics.max_incident_labels);
    metrics_.keep_counts(*cached, ctx.now);
  }
  in.queues = std::move(cached->queues);
  in.incidents = std::move(cached->incidents);
  in.now = ctx.now;
  in.waiters = co_await service_.waiting_by_queue();
  in.leader = tasks_.leader();
  in.writes = service_.write_stats();
  in.tasks = tasks_.stats();
  Response r;
  r.content_type = "text/plain; version=0.0.4";
  r.body = metrics_.exposition(in);
  co_return r;
}

// DELETE /queues/{queue}/messages?status=&before=: an operator's purge, audited, in batches.
OpsHandlers::R OpsHandlers::purge(const Request& req, const RouteMatch& m) {
  auto queue = queue_param(m.params.at(0));
  if (!queue) co_return unknown_queue(config_, req);
  core::PurgeRequest in;
  FieldErrors errors = core::decode_purge(req.query, in);
  auto ctx = request_context(config_, service_.clock(), req, &errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  long long purged = co_await core::purge_queue(store_, service_, ctx, *queue, in.status,
                                                in.before.value_or(ctx.now));
  co_return json_response(200, json::object{{"purged", purged}});
}

// The token table as of this request (a SIGHUP applies at once); never a token or a hash.
OpsHandlers::R OpsHandlers::whoami(const Request& req, const RouteMatch&) {
  json::array roles;
  for (Role r : req.roles) roles.emplace_back(to_string(r));
  co_return json_response(200, json::object{{"actor", req.actor},
                                            {"roles", std::move(roles)},
                                            {"tokens_configured", req.tokens_configured}});
}

OpsHandlers::R OpsHandlers::healthz(const Request&, const RouteMatch&) {
  json::object body;
  body["status"] = "ok";
  co_return json_response(200, body);
}

OpsHandlers::R OpsHandlers::readyz(const Request& req, const RouteMatch&) {
  bool ready = co_await service_.ready();
  if (!ready) {
    co_return problem(context(config_, req), 503, "database-unavailable", "Not ready",
                      "the database is unreachable or its schema is not current", "not ready");
  }
  json::object body;
  body["status"] = "ready";
  co_return json_response(200, body);
}

// The API's own description (docs/openapi.json, built in): the same bytes for every caller.
OpsHandlers::R OpsHandlers::openapi(const Request&, const RouteMatch&) {
  co_return text_response(200, std::string(openapi_document()));
}

}  // namespace dlq::http
