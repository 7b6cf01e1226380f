// Retention sweeps and purges, a batch per transaction.
#include "core/retention.hpp"

#include <functional>

#include <boost/json.hpp>

#include "core/desk.hpp"
#include "model/logging.hpp"

namespace dlq::core {
namespace json = boost::json;

namespace {

// A batch holds the SQLite writer while it runs: short batches keep live writes waiting little
// (bench.sh --ops: enqueue p99 13 ms during a sweep of a million rows, 5 ms without one).
constexpr int kBatch = 250;

json::object counts_json(const std::vector<std::pair<std::string, long long>>& by_queue) {
  json::object o;
  for (const auto& [queue, n] : by_queue) o[queue] = n;
  return o;
}

// Deletes batch after batch until one comes back short. `keep_going` is asked between batches.
template <class KeepGoing>
awaitable<long long> purge_batches(store::Store& store, QueueService& service,
                                   store::PurgeParams params, bool by_retention, TimeMs now,
                                   KeepGoing keep_going) {
  long long total = 0;
  for (;;) {
    auto purged = co_await store.messages_purge(params);
    total += purged.total;
    for (const auto& [queue, n] : purged.by_queue) {
      service.publish_count(EventKind::purged, queue, n, now, params.status, by_retention);
    }
    if (purged.total < params.limit || !keep_going()) break;
  }
  co_return total;
}

// The incidents' tables: per_hour's rows before its first hour, and (retention.dead_seconds > 0)
// incidents with no dead message whose last death is older than that, a batch per transaction.
template <class KeepGoing>
awaitable<void> prune_incidents(store::Store& store, const Config& config, TimeMs now,
                                KeepGoing keep_going) {
  store::IncidentPruneParams params;
  params.hours_before = incident_hours_from(now);
  if (config.retention.dead_seconds > 0) {
    params.idle_before = now - seconds_to_ms(config.retention.dead_seconds);
  }
  params.limit = kBatch;
  long long hours = 0, incidents = 0;
  while (keep_going()) {
    auto pruned = co_await store.incidents_prune(params);
    hours += pruned.hours;
    incidents += pruned.incidents;
    if (pruned.hours == 0 && pruned.incidents == 0) break;
  }
  if (hours > 0 || incidents > 0) {
    log::info("retention sweep", {{"incident_hours", std::to_string(hours)},
                                  {"incidents", std::to_string(incidents)}});
  }
}

// SQS queues with an explicit MessageRetentionPeriod: their pending messages older than it,
// counted from the later of created_at and the time the period was set, never one whose
// retry_after is still ahead (docs/sqs.md).
template <class KeepGoing>
awaitable<long long> sqs_retention(store::Store& store, QueueService& service, TimeMs now,
                                   KeepGoing keep_going) {
  long long total = 0;
  store::SqsQueuePage page;
  for (;;) {
    auto rows = co_await store.sqs_queues_page(page);
    for (const auto& row : rows) {
      if (!keep_going() || !row.retention_set_at) continue;
      boost::system::error_code ec;
      auto attributes = json::parse(row.attributes, ec);
      const json::value* period = ec || !attributes.is_object()
                                      ? nullptr
                                      : attributes.as_object().if_contains("MessageRetentionPeriod");
      if (!period || !period->is_string()) continue;
      long long seconds = std::atoll(std::string(period->as_string()).c_str());
      TimeMs cutoff = now - seconds * 1000;
      if (seconds <= 0 || *row.retention_set_at >= cutoff) continue;
      store::PurgeParams params;
      params.status = Status::pending;
      params.before = now + 1;
      params.queue = row.name;
      params.created_before = cutoff;
      params.due_by = now;
      params.limit = kBatch;
      params.audit = [now, seconds, queue = row.name](
                         const std::vector<std::pair<std::string, long long>>& by_queue) {
        AuditEntry e;
        e.at = now;
        e.action = "retention_purge";
        e.queue = queue;
        long long n = by_queue.empty() ? 0 : by_queue.front().second;
        e.details = json::serialize(json::object{{"status", "pending"},
                                                 {"sqs_message_retention_period", seconds},
                                                 {"purged", n},
                                                 {"by_queue", counts_json(by_queue)}});
        return e;
      };
      total += co_await purge_batches(store, service, std::move(params), true, now, keep_going);
    }
    if (static_cast<int>(rows.size()) < page.limit) break;
    page.after = rows.back().name;
  }
  co_return total;
}

}  // namespace

std::vector<RetentionCut> retention_cuts(const Config& config, TimeMs now) {
  // Queues with a retention of their own are swept on their own; the rest together.
  std::vector<std::string> own;
  for (const auto& [queue, policy] : config.queues) {
    const auto& r = policy.retention;
    if (r.succeeded_seconds || r.dead_seconds || r.dismissed_seconds) own.push_back(queue);
  }
  struct Scope {
    std::optional<std::string> queue;
    RetentionPolicy retention;
  };
  std::vector<Scope> scopes{{std::nullopt, config.retention}};
  for (const auto& queue : own) scopes.push_back({queue, config.retention_for(queue)});

  std::vector<RetentionCut> cuts;
  for (const auto& scope : scopes) {
    const std::pair<Status, double> ages[] = {{Status::succeeded, scope.retention.succeeded_seconds},
                                              {Status::dismissed, scope.retention.dismissed_seconds},
                                              {Status::dead, scope.retention.dead_seconds}};
    for (const auto& [status, seconds] : ages) {
      if (seconds <= 0) continue;  // 0: kept forever
      RetentionCut cut;
      cut.queue = scope.queue;
      if (!scope.queue) cut.except = own;
      cut.status = status;
      cut.older_than_seconds = seconds;
      cut.before = now - seconds_to_ms(seconds);
      cuts.push_back(std::move(cut));
    }
  }
  return cuts;
}

awaitable<long long> retention_sweep(store::Store& store, QueueService& service,
                                     const Config& config, TimeMs now, const TaskContext* ctx) {
  auto keep_going = [ctx] { return !ctx || (ctx->leading() && !ctx->stopping()); };
  const std::vector<RetentionCut> cuts = retention_cuts(config, now);
  long long total = 0;
  for (const auto& cut : cuts) {
    if (!keep_going()) break;
    store::PurgeParams params;
    params.status = cut.status;
    params.before = cut.before;
    params.queue = cut.queue;
    params.except = cut.except;
    params.limit = kBatch;
    params.audit = [now, status = cut.status, seconds = cut.older_than_seconds, queue = cut.queue](
                       const std::vector<std::pair<std::string, long long>>& by_queue) {
      AuditEntry e;
      e.at = now;
      e.action = "retention_purge";
      e.queue = queue;
      if (!queue && by_queue.size() == 1) e.queue = by_queue.front().first;
      long long n = 0;
      for (const auto& [q, c] : by_queue) n += c;
      e.details = json::serialize(json::object{{"status", to_string(status)},
                                               {"older_than_seconds", seconds},
                                               {"purged", n},
                                               {"by_queue", counts_json(by_queue)}});
      return e;
    };
    total += co_await purge_batches(store, service, std::move(params), true, now, keep_going);
  }
  total += co_await sqs_retention(store, service, now, keep_going);
  if (total > 0) log::info("retention sweep", {{"purged", std::to_string(total)}});
  co_await prune_incidents(store, config, now, keep_going);
  co_return total;
}

TaskSpec retention_task(store::Store& store, QueueService& service, const Config& config) {
  TaskSpec spec;
  spec.name = kRetentionTask;
  spec.scope = TaskScope::leader_only;
  spec.interval_ms = seconds_to_ms(config.retention.sweep_interval_seconds);
  spec.first_delay_ms = 0;
  spec.body = [&store, &service, &config](const TaskContext& ctx) -> boost::asio::awaitable<void> {
    co_await retention_sweep(store, service, config, ctx.now(), &ctx);
  };
  return spec;
}

namespace {

// One queue's purge by an operator, in batches: each batch's audit entry `purge` by the caller,
// with the filter and details `describe` makes of how many the batch deleted (JSON texts).
using DescribePurge = std::function<std::pair<std::string, std::string>(long long purged)>;
awaitable<long long> operator_purge(store::Store& store, QueueService& service,
                                    const RequestContext& ctx, const std::string& queue,
                                    Status status, TimeMs before, DescribePurge describe) {
  store::PurgeParams params;
  params.status = status;
  params.before = before;
  params.queue = queue;
  params.limit = kBatch;
  params.audit = [&ctx, &queue, describe = std::move(describe)](
                     const std::vector<std::pair<std::string, long long>>& by_queue) {
    AuditEntry e;
    e.at = ctx.now;
    e.actor = ctx.actor;
    e.action = "purge";
    e.queue = queue;
    auto [filter, details] = describe(by_queue.empty() ? 0 : by_queue.front().second);
    e.filter = std::move(filter);
    e.details = std::move(details);
    return e;
  };
  co_return co_await purge_batches(store, service, std::move(params), false, ctx.now,
                                   [] { return true; });
}

}  // namespace

awaitable<long long> purge_queue(store::Store& store, QueueService& service,
                                 const RequestContext& ctx, std::string queue, Status status,
                                 TimeMs before) {
  DescribePurge describe = [status, before](long long n) {
    return std::pair{json::serialize(json::object{{"status", to_string(status)},
                                                  {"before", format_rfc3339(before)}}),
                     json::serialize(json::object{{"purged", n}})};
  };
  co_return co_await operator_purge(store, service, ctx, queue, status, before,
                                    std::move(describe));
}

awaitable<long long> sqs_purge(store::Store& store, QueueService& service,
                               const RequestContext& ctx, std::string queue,
                               std::vector<Status> statuses, TimeMs before, std::string action) {
  long long total = 0;
  for (Status status : statuses) {
    DescribePurge describe = [&action, &statuses, status, before](long long n) {
      json::object by_status;
      for (Status s : statuses) by_status[to_string(s)] = s == status ? n : 0;
      return std::pair{
          json::serialize(json::object{{"sqs_action", action}, {"before", format_rfc3339(before)}}),
          json::serialize(json::object{{"purged", n}, {"by_status", std::move(by_status)}})};
    };
    total += co_await operator_purge(store, service, ctx, queue, status, before,
                                     std::move(describe));
  }
  co_return total;
}

}  // namespace dlq::core
