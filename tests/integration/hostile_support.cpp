// Raw sockets and /proc readings for the hostile-client tests.
#include "integration/hostile_support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include <boost/json.hpp>

#include "support/http_client.hpp"

namespace dlq::test {
namespace {

long status_field_mib(pid_t pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + ":", 0) == 0) return std::stol(line.substr(name.size() + 1)) / 1024;
  }
  return -1;
}

std::string problem_member(const std::string& bytes, std::string_view key) {
  auto body = bytes.find("\r\n\r\n");
  if (body == std::string::npos) return "";
  std::string head = bytes.substr(0, body + 2);
  for (auto& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::size_t length = std::string::npos;  // a later answer on the same connection follows it
  if (auto at = head.find("\r\ncontent-length:"); at != std::string::npos) {
    length = std::stoul(head.substr(at + 17));
  }
  std::error_code ec;
  auto v = boost::json::parse(bytes.substr(body + 4, length), ec);
  if (ec || !v.is_object() || !v.as_object().contains(key)) return "";
  return str(v, key);
}

}  // namespace

long resident_mib(pid_t pid) { return status_field_mib(pid, "VmRSS"); }
long peak_resident_mib(pid_t pid) { return status_field_mib(pid, "VmHWM"); }

bool healthy(unsigned short port) {
  try {
    return HttpClient(port).get("/healthz").status == 200;
  } catch (const std::exception&) {
    return false;
  }
}

RawConnection::RawConnection(unsigned short port, int receive_buffer) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (receive_buffer > 0) {
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    throw std::runtime_error("cannot connect to dlqd");
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

RawConnection::~RawConnection() { close(); }

void RawConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool RawConnection::send(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Reads what is there without waiting; false once the server closed.
bool RawConnection::read_available() {
  char buf[65536];
  for (;;) {
    ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      received_.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
    closed_ = true;  // 0: orderly close; an error: a reset
    return false;
  }
}

std::size_t RawConnection::flood(std::string_view filler, std::size_t limit) {
  std::size_t sent = 0;
  while (sent < limit && !closed_ && received_.empty()) {
    pollfd p{fd_, POLLIN | POLLOUT, 0};
    if (::poll(&p, 1, 10000) <= 0) break;  // neither readable nor writable for 10 s
    if (p.revents & (POLLIN | POLLERR | POLLHUP)) {
      read_available();
      continue;
    }
    ssize_t n = ::send(fd_, filler.data(), std::min(filler.size(), limit - sent),
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  return sent;
}

void RawConnection::read(int quiet_ms) {
  while (!closed_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, quiet_ms) <= 0) return;
    read_available();
  }
}

std::string status_line(const std::string& bytes) {
  if (!bytes.starts_with("HTTP/1.")) return "";
  return bytes.substr(0, bytes.find("\r\n"));
}

std::string problem_slug(const std::string& bytes) {
  std::string type = problem_member(bytes, "type");
  return type.substr(type.rfind('/') + 1);
}

std::string problem_instance(const std::string& bytes) { return problem_member(bytes, "instance"); }

}  // namespace dlq::test
