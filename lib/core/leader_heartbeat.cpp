// The leadership record, renewed by the leader.
#include "core/leader_heartbeat.hpp"

#include "model/logging.hpp"

namespace dlq::core {

TaskSpec leader_heartbeat_task(store::Store& store, TimeMs takeover_ms) {
  TaskSpec spec;
  spec.name = "leader-heartbeat";
  spec.scope = TaskScope::leader_only;
  spec.interval_ms = std::max<TimeMs>(1, takeover_ms / 2);
  spec.body = [&store, takeover_ms](const TaskContext& ctx) -> boost::asio::awaitable<void> {
    if (!ctx.leading()) co_return;
    store::LeadershipRenewParams p;
    p.node = store.node_id();
    p.now = ctx.now();
    p.stale_before = p.now - takeover_ms;
    auto record = co_await store.leadership_renew(std::move(p));
    if (record.node != store.node_id()) {
      // The previous leader renewed it recently: it died a moment ago, or it has not noticed yet
      // that it lost the lock. Leader-only work stays safe (every unit is conditional).
      log::info("the leadership record still names another node; taken over once stale",
                {{"node", store.node_id()}, {"record_node", record.node}});
    }
  };
  return spec;
}

}  // namespace dlq::core
