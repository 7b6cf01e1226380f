#include "support/tcp_proxy.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace dlq::test {
namespace {

sockaddr_in loopback(unsigned short port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

}  // namespace

// Where one client's stream stands: in the startup message (a length, no type byte) or in typed
// messages (a type byte, then a length that counts itself).
struct PgFraming {
  bool started = false;
  int header_have = 0;
  unsigned char header[5] = {};
  long long body_left = 0;
};

std::size_t TcpProxy::before_cut(PgFraming& f, const char* data, std::size_t size) {
  std::size_t i = 0;
  while (i < size) {
    if (f.body_left > 0) {
      auto take = std::min<long long>(f.body_left, static_cast<long long>(size - i));
      i += static_cast<std::size_t>(take);
      f.body_left -= take;
      continue;
    }
    const int header_size = f.started ? 5 : 4;
    if (f.header_have == 0 && cut_at_ > 0 && ++messages_ == cut_at_) return i;
    f.header[f.header_have++] = static_cast<unsigned char>(data[i++]);
    if (f.header_have == header_size) {
      const unsigned char* len = f.header + header_size - 4;
      f.body_left = ((static_cast<long long>(len[0]) << 24) | (len[1] << 16) | (len[2] << 8) | len[3]) - 4;
      f.header_have = 0;
      f.started = true;
    }
  }
  return size;
}

TcpProxy::TcpProxy(unsigned short target_port) : target_(target_port) {
  listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
  auto any = loopback(0);
  socklen_t len = sizeof any;
  if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0 ||
      ::listen(listener_, 64) != 0 ||
      ::getsockname(listener_, reinterpret_cast<sockaddr*>(&any), &len) != 0) {
    throw std::runtime_error("tcp proxy: cannot listen");
  }
  port_ = ntohs(any.sin_port);
  threads_.emplace_back([this] { accept_loop(); });
}

TcpProxy::~TcpProxy() {
  stopping_ = true;
  ::shutdown(listener_, SHUT_RDWR);
  {
    std::lock_guard lock(mu_);
    for (int s : sockets_) ::shutdown(s, SHUT_RDWR);
  }
  for (auto& t : threads_) t.join();
  ::close(listener_);
  for (int s : sockets_) ::close(s);
}

void TcpProxy::accept_loop() {
  while (!stopping_) {
    pollfd p{listener_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    int client = ::accept(listener_, nullptr, nullptr);
    if (client < 0) continue;
    int server = ::socket(AF_INET, SOCK_STREAM, 0);
    auto target = loopback(target_);
    if (server < 0 || ::connect(server, reinterpret_cast<sockaddr*>(&target), sizeof target) != 0) {
      ::close(client);
      if (server >= 0) ::close(server);
      continue;
    }
    std::lock_guard lock(mu_);
    sockets_.push_back(client);
    sockets_.push_back(server);
    threads_.emplace_back([this, client, server] { pump(client, server, true); });
    threads_.emplace_back([this, client, server] { pump(server, client, false); });
  }
}

// Copies bytes from one socket to the other; while silenced it reads nothing, so what is sent
// stays unanswered. A side that closes closes the other direction too.
void TcpProxy::pump(int from, int to, bool from_client) {
  char buf[16384];
  PgFraming framing;
  while (!stopping_) {
    if (silent_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    pollfd p{from, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    if (silent_) continue;
    ssize_t n = ::read(from, buf, sizeof buf);
    if (n <= 0) break;
    bool cutting = false;
    if (from_client && cut_at_ > 0) {
      auto keep = before_cut(framing, buf, static_cast<std::size_t>(n));
      cutting = keep < static_cast<std::size_t>(n);
      n = static_cast<ssize_t>(keep);
    }
    for (ssize_t sent = 0; sent < n;) {
      ssize_t w = ::send(to, buf + sent, static_cast<std::size_t>(n - sent), MSG_NOSIGNAL);
      if (w <= 0) {
        n = -1;
        break;
      }
      sent += w;
    }
    if (n < 0) break;
    if (cutting) {  // the cut: both directions, at once
      cut_done_ = true;
      ::shutdown(from, SHUT_RDWR);
      ::shutdown(to, SHUT_RDWR);
      return;
    }
  }
  ::shutdown(to, SHUT_WR);
}

}  // namespace dlq::test
