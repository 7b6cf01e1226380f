// The task host: one loop per task on the host's strand, each sleeping on its own timer.
#include "core/task_host.hpp"

#include <algorithm>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "model/error.hpp"
#include "model/logging.hpp"

namespace dlq::core {
namespace asio = boost::asio;
using asio::use_awaitable;
using std::chrono::steady_clock;

namespace {

constexpr TimeMs kFirstRetryMs = 1000;

std::string_view to_string(TaskScope s) {
  return s == TaskScope::leader_only ? "leader_only" : "every_node";
}

}  // namespace

struct TaskHost::Task {
  Task(TaskSpec s, const asio::strand<asio::any_io_executor>& strand)
      : spec(std::move(s)), timer(strand) {}
  TaskSpec spec;
  asio::steady_timer timer;
  TimeMs next_run = 0;
  bool poked = false;
  int failures_in_row = 0;
  std::atomic<std::uint64_t> runs{0};
  std::atomic<std::uint64_t> failures{0};
};

TimeMs TaskContext::now() const { return host_.clock().now(); }
bool TaskContext::leading() const { return host_.leader(); }
bool TaskContext::stopping() const { return host_.stopping(); }

TaskHost::TaskHost(asio::any_io_executor executor, const Clock& clock)
    : strand_(asio::make_strand(executor)), clock_(clock), loops_done_(strand_) {}

TaskHost::~TaskHost() = default;

void TaskHost::add(TaskSpec spec) {
  if (started_) throw std::logic_error("TaskHost::add after start");
  tasks_.push_back(std::make_unique<Task>(std::move(spec), strand_));
}

void TaskHost::start() {
  started_ = true;
  for (auto& task : tasks_) {
    ++running_loops_;
    asio::co_spawn(strand_, loop(*task), [name = task->spec.name](std::exception_ptr e) {
      if (e) log::error("task loop ended by an error", {{"task", name}, {"error", describe(e)}});
    });
  }
}

asio::awaitable<bool> TaskHost::stop(std::chrono::milliseconds grace) {
  auto wait = [this, grace]() -> asio::awaitable<bool> {
    stopping_ = true;
    wake_all();
    const auto deadline = steady_clock::now() + grace;
    while (running_loops_ > 0 && steady_clock::now() < deadline) {
      loops_done_.expires_at(deadline);
      co_await loops_done_.async_wait(asio::as_tuple(use_awaitable));
    }
    if (running_loops_ > 0) {
      log::warn("background tasks still running after the grace period",
                {{"tasks", std::to_string(running_loops_)}});
    }
    co_return running_loops_ == 0;
  };
  co_return co_await asio::co_spawn(strand_, wait(), use_awaitable);
}

void TaskHost::set_leader(bool leading) {
  asio::post(strand_, [this, leading] {
    if (leader_.exchange(leading) == leading) return;
    std::string names;
    TimeMs now = clock_.now();
    for (auto& task : tasks_) {
      if (task->spec.scope != TaskScope::leader_only) continue;
      if (!names.empty()) names += ",";
      names += task->spec.name;
      if (leading) task->next_run = now + task->spec.first_delay_ms;
      task->timer.cancel();
    }
    if (leading) {
      log::info("leadership gained; leader-only tasks start", {{"tasks", names}});
    } else {
      log::warn("leadership lost; leader-only tasks stop", {{"tasks", names}});
    }
  });
}

void TaskHost::clock_moved() {
  asio::post(strand_, [this] { wake_all(); });
}

void TaskHost::run_now(std::string_view name) {
  asio::post(strand_, [this, name = std::string(name)] {
    for (auto& task : tasks_) {
      if (task->spec.name != name) continue;
      task->poked = true;
      task->timer.cancel();
    }
  });
}

void TaskHost::wake_all() {
  for (auto& task : tasks_) task->timer.cancel();
}

std::vector<TaskStats> TaskHost::stats() const {
  std::vector<TaskStats> out;
  for (const auto& task : tasks_) {
    out.push_back({task->spec.name, task->spec.scope, task->runs.load(), task->failures.load()});
  }
  return out;
}

// One task's life: wait until it is due (and, if leader-only, this node leads), run the body,
// schedule the next run: its interval after a success, a growing delay after a failure.
asio::awaitable<void> TaskHost::loop(Task& t) {
  t.next_run = clock_.now() + t.spec.first_delay_ms;
  while (!stopping_) {
    const bool eligible = t.spec.scope == TaskScope::every_node || leader_;
    TimeMs now = clock_.now();
    if (eligible && (t.poked || now >= t.next_run)) {
      t.poked = false;
      TaskContext context(*this);
      std::string error;
      try {
        co_await t.spec.body(context);
      } catch (const std::exception& e) {
        error = e.what();
        if (error.empty()) error = "unknown error";
      } catch (...) {
        error = "unknown error";
      }
      ++t.runs;
      if (error.empty()) {
        t.failures_in_row = 0;
        t.next_run = clock_.now() + std::min(t.spec.interval_ms,
                                             context.again_in().value_or(t.spec.interval_ms));
        continue;
      }
      ++t.failures;
      TimeMs delay = kFirstRetryMs << std::min(t.failures_in_row, 20);
      delay = std::max<TimeMs>(1, std::min(delay, t.spec.interval_ms));
      ++t.failures_in_row;
      t.next_run = clock_.now() + delay;
      if (!stopping_) {
        log::warn("task failed; retrying", {{"task", t.spec.name},
                                            {"scope", std::string(to_string(t.spec.scope))},
                                            {"error", error},
                                            {"retry_in_ms", std::to_string(delay)}});
      }
      continue;
    }
    // Sleep until due, or until something changes (leadership, the clock, a poke, stop).
    if (eligible) {
      t.timer.expires_after(std::chrono::milliseconds(std::max<TimeMs>(0, t.next_run - now)));
    } else {
      t.timer.expires_at(asio::steady_timer::time_point::max());
    }
    co_await t.timer.async_wait(asio::as_tuple(use_awaitable));
  }
  --running_loops_;
  loops_done_.cancel();
}

}  // namespace dlq::core
