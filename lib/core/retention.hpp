// Deleting finished messages: retention (a leader-only task: succeeded, dismissed and dead
// messages past their configured age, dead ones aged from dead_at) and an operator's purge of
// one queue. Both delete in batches of 250 rows, each batch one transaction with its
// audit entry (retention_purge or purge), so the SQLite writer is never held for long and live
// traffic goes between batches. Nothing else ever deletes a message; no size cap exists.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/queue_service.hpp"
#include "core/request_context.hpp"
#include "core/task_host.hpp"
#include "store/store.hpp"

namespace dlq::core {

inline constexpr const char* kRetentionTask = "retention";

// One delete of a sweep: the messages in `status` that entered it before `before` (now minus
// `older_than_seconds`), in `queue`, or, with none, in every queue but `except` (those have a
// retention of their own and a cut of their own).
struct RetentionCut {
  std::optional<std::string> queue;
  std::vector<std::string> except;
  Status status = Status::succeeded;
  double older_than_seconds = 0;
  TimeMs before = 0;
};

// The cuts of a sweep at `now`, in the order it makes them: the global retention for the queues
// without their own first, then each queue with its own (merged over the global); per scope
// succeeded, dismissed, dead. An age of 0 keeps those messages forever: no cut.
std::vector<RetentionCut> retention_cuts(const Config& config, TimeMs now);

// One sweep at `now`; returns how many messages it deleted. Stops between batches when `ctx`
// says this node no longer leads or is stopping.
awaitable<long long> retention_sweep(store::Store& store, QueueService& service,
                                     const Config& config, TimeMs now, const TaskContext* ctx);

TaskSpec retention_task(store::Store& store, QueueService& service, const Config& config);

// DELETE /queues/{queue}/messages: `status` (succeeded, dead or dismissed) that entered it before
// `before`.
awaitable<long long> purge_queue(store::Store& store, QueueService& service,
                                 const RequestContext& ctx, std::string queue, Status status,
                                 TimeMs before);

// The SQS front's PurgeQueue and DeleteQueue (issue 38): every message of `statuses` in `queue`
// that entered its status before `before`, in batches, each audited `purge` with
// {"sqs_action": action, "before"} and {"purged", "by_status"}. Returns how many went.
awaitable<long long> sqs_purge(store::Store& store, QueueService& service,
                               const RequestContext& ctx, std::string queue,
                               std::vector<Status> statuses, TimeMs before, std::string action);

}  // namespace dlq::core
