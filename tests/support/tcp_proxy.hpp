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

 private:
  void accept_loop();
  void pump(int from, int to);

  unsigned short target_;
  unsigned short port_ = 0;
  int listener_ = -1;
  std::atomic<bool> silent_{false};
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::vector<int> sockets_;
  std::vector<std::thread> threads_;
};

}  // namespace dlq::test
