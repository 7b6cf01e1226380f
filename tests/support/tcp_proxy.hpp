// A user-space TCP proxy on 127.0.0.1 for fault tests: forwards every connection to a target
// port until silenced, then forwards nothing either way while keeping every connection open (as
// a network that drops packets would look to libpq once the kernel has acknowledged them).
#pragma once

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace dlq::test {

class TcpProxy {
 public:
  explicit TcpProxy(unsigned short target_port);
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  unsigned short port() const { return port_; }
  void silence(bool on) { silent_ = on; }
  // PostgreSQL: counts the messages clients send (all connections together, each connection's
  // startup message and then its typed messages; the client must not ask for SSL) and cuts the
  // connection that sends the Nth, before any byte of it is passed on. 0: never.
  void cut_at_message(long long n) { cut_at_ = n; }
  bool cut() const { return cut_done_; }
  long long messages() const { return messages_; }

 private:
  void accept_loop();
  void pump(int from, int to, bool from_client);
  // How many bytes of `data` to pass on before the message to cut (all of them: none to cut).
  std::size_t before_cut(struct PgFraming& framing, const char* data, std::size_t size);

  unsigned short target_;
  unsigned short port_ = 0;
  int listener_ = -1;
  std::atomic<bool> silent_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<long long> cut_at_{0};
  std::atomic<long long> messages_{0};
  std::atomic<bool> cut_done_{false};
  std::mutex mu_;
  std::vector<int> sockets_;
  std::vector<std::thread> threads_;
};

}  // namespace dlq::test
