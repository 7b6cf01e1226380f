// The I/O threads: one io_context per thread, each run by exactly one thread, so nothing a
// request does on its connection goes through a scheduler (or a lock) that other threads share.
// Context 0 is the main one: the caller's thread runs it, and it also hosts the acceptor, the
// wake-up scheduler, the task host and the signals. Connections are spread round-robin over all
// of them (context 0 included, so `threads: 1` is the single-threaded server it always was).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

namespace dlq::http {

class IoPool {
 public:
  // The CPUs this process may run on: its affinity mask, lowered by a cgroup CPU quota
  // (a container limited to two CPUs on a large host has two). At least 1.
  static int available_cpus();
  // How many I/O threads `configured` (0: one per available CPU) gives: never more than the
  // available CPUs, because I/O threads never block (the store has threads of its own), so
  // more of them only queue for the same cores and switch between connections.
  static int io_threads(int configured);

  explicit IoPool(int threads);
  ~IoPool();
  IoPool(const IoPool&) = delete;
  IoPool& operator=(const IoPool&) = delete;

  boost::asio::io_context& main() { return *contexts_.front(); }
  std::size_t size() const { return contexts_.size(); }
  // The context for the next connection. Called by the acceptor only (context 0's thread).
  boost::asio::io_context& next();

  // Runs contexts 1..n-1 on threads of their own and context 0 on the caller's; returns when
  // every context has ended (after release() once their work is done, or after stop()).
  void run();
  // Lets each context end once it has no work left (the shutdown's last step).
  void release();
  // Ends every context now, work or not.
  void stop();

 private:
  using Guard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
  std::vector<std::optional<Guard>> guards_;
  std::size_t next_ = 0;
};

}  // namespace dlq::http
