// The thread a dedicated libpq connection lives on (the change listener, the leader campaign):
// it runs one loop until stop(), which wakes the loop from whatever poll() it waits in through a
// self-pipe and joins it. The loops keep their connection logic; this keeps the thread.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace dlq::store {

class PgThread {
 public:
  PgThread();  // throws std::runtime_error when it cannot make the pipe
  ~PgThread();
  PgThread(const PgThread&) = delete;
  PgThread& operator=(const PgThread&) = delete;

  // Runs `loop` on the thread (once). The loop returns when stopping() says so.
  void start(std::function<void()> loop);
  // Sets stopping(), wakes the loop and joins it. Idempotent; from any thread but the loop's.
  void stop();
  bool stopping() const { return stopping_.load(); }

  enum class Woke { readable, timeout, stopping };
  // The loop's one way to wait: until `socket` is readable, `ms` pass, or stop() (which wins
  // over the other two). `socket` -1: only the time or stop(). An interrupted poll counts as
  // the time passing.
  Woke wait(int socket, int ms);

 private:
  std::atomic<bool> stopping_{false};
  int wake_[2] = {-1, -1};  // a byte written to wake_[1] on stop makes wake_[0] readable
  std::thread thread_;
};

}  // namespace dlq::store
