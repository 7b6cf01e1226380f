// The libpq connection thread: its self-pipe, its wait and its stop.
#include "store/pg_thread.hpp"

#include <poll.h>
#include <unistd.h>

#include <stdexcept>

namespace dlq::store {

PgThread::PgThread() {
  if (pipe(wake_) != 0) throw std::runtime_error("pipe failed");
}

PgThread::~PgThread() { stop(); }

void PgThread::start(std::function<void()> loop) { thread_ = std::thread(std::move(loop)); }

void PgThread::stop() {
  if (stopping_.exchange(true)) return;
  char byte = 1;
  [[maybe_unused]] auto written = write(wake_[1], &byte, 1);
  if (thread_.joinable()) thread_.join();
  close(wake_[0]);
  close(wake_[1]);
}

PgThread::Woke PgThread::wait(int socket, int ms) {
  // poll() skips an entry whose descriptor is negative.
  pollfd fds[2] = {{wake_[0], POLLIN, 0}, {socket, POLLIN, 0}};
  int n = poll(fds, 2, ms);
  if (fds[0].revents || stopping_) return Woke::stopping;
  if (n > 0 && fds[1].revents) return Woke::readable;
  return Woke::timeout;
}

}  // namespace dlq::store
