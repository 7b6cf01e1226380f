// The home of background work: named tasks, each with its own timer, started and stopped with
// the service. A task runs on every node or only on the leader of the database; leader-only
// tasks start when this node gains the leadership and stop as soon as it learns it lost it. A
// task's failure is logged and retried with backoff; nothing a task does ends the process.
// Time comes from the Clock (tests move a ManualClock and call clock_moved()).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "model/time.hpp"

namespace dlq::core {

enum class TaskScope { every_node, leader_only };

class TaskHost;

// What a running task body may ask its host.
class TaskContext {
 public:
  explicit TaskContext(const TaskHost& host) : host_(host) {}
  TimeMs now() const;
  // False once this node lost the leadership (leader-only work should stop between units; each
  // unit must still commit with a condition that makes a second run of it a no-op, since
  // leadership is a hint, not a fence).
  bool leading() const;
  // True once the host is stopping: finish the current unit and return.
  bool stopping() const;
  // Asks for the next run sooner than the interval (a paced task with work due in `ms`).
  void run_again_in(TimeMs ms) const { again_in_ = ms; }
  std::optional<TimeMs> again_in() const { return again_in_; }

 private:
  const TaskHost& host_;
  mutable std::optional<TimeMs> again_in_;
};

struct TaskSpec {
  std::string name;
  TaskScope scope = TaskScope::every_node;
  TimeMs interval_ms = 1000;
  TimeMs first_delay_ms = 0;  // after start, or after gaining the leadership
  std::function<boost::asio::awaitable<void>(const TaskContext&)> body;
};

struct TaskStats {
  std::string name;
  TaskScope scope = TaskScope::every_node;
  std::uint64_t runs = 0;      // bodies finished, successfully or not
  std::uint64_t failures = 0;  // bodies that threw
};

class TaskHost {
 public:
  TaskHost(boost::asio::any_io_executor executor, const Clock& clock);
  ~TaskHost();
  TaskHost(const TaskHost&) = delete;
  TaskHost& operator=(const TaskHost&) = delete;

  // Before start().
  void add(TaskSpec spec);
  void start();
  // Stops every task: no body starts after this; waits up to `grace` for bodies still running.
  // True when every task ended within it.
  boost::asio::awaitable<bool> stop(std::chrono::milliseconds grace);

  // Thread-safe. Whether this node leads its database (the store's campaign reports it).
  void set_leader(bool leading);
  bool leader() const { return leader_.load(); }
  bool stopping() const { return stopping_.load(); }
  // Thread-safe. The clock jumped: every task looks at its schedule again.
  void clock_moved();
  // Thread-safe. Runs the named task as soon as it may (once, then on its interval again).
  void run_now(std::string_view name);

  const Clock& clock() const { return clock_; }
  // A snapshot for metrics and tests.
  std::vector<TaskStats> stats() const;

 private:
  struct Task;
  boost::asio::awaitable<void> loop(Task& task);
  void wake_all();

  boost::asio::strand<boost::asio::any_io_executor> strand_;
  const Clock& clock_;
  std::vector<std::unique_ptr<Task>> tasks_;
  std::atomic<bool> leader_{false};
  std::atomic<bool> stopping_{false};
  bool started_ = false;
  int running_loops_ = 0;  // strand-confined
  boost::asio::steady_timer loops_done_;  // cancelled when a loop ends (stop() waits on it)
};

}  // namespace dlq::core
