// The first leader-only task: the leader writes itself into the database's leadership record
// (node, since, renewed_at) so operators can see who leads, and learns when another node holds
// the record. It shows the pattern every leader-only task follows: the unit of work commits with
// a condition (the record is ours, or stale) that makes a second leader's run a no-op.
#pragma once

#include "core/task_host.hpp"
#include "store/store.hpp"

namespace dlq::core {

// Runs every takeover / 2; another node's record is taken over once older than `takeover_ms`.
TaskSpec leader_heartbeat_task(store::Store& store, TimeMs takeover_ms);

}  // namespace dlq::core
