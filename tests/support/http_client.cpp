#include "support/http_client.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cstdlib>
#include <fstream>
#include <mutex>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

namespace dlq::test {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using asio::ip::tcp;

namespace {

void set_timeout(tcp::socket& s, int ms) {
  timeval tv{ms / 1000, (ms % 1000) * 1000};
  setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(s.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// DLQ_RECORD_RESPONSES=<file>: every answer this client reads is appended to <file> as one JSON
// line {method, target, status, content_type, body}, for tests/openapi/check-responses.js to
// check against docs/openapi.json. Bodies above 1 MiB are left out (status and type still count).
void record(std::string_view method, std::string_view target, const HttpResponse& res) {
  static const char* path = std::getenv("DLQ_RECORD_RESPONSES");
  if (!path || !*path) return;
  // One write(2) per line on an O_APPEND descriptor: lines from test processes running side by
  // side (ctest -j) never interleave.
  static const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  constexpr std::size_t kMaxRecorded = 1024 * 1024;
  boost::json::object line{{"method", method},
                           {"target", target},
                           {"status", res.status},
                           {"content_type", res.header("content-type")}};
  if (res.body.size() <= kMaxRecorded) {
    line["body"] = res.body;
  } else {
    line["body_omitted"] = res.body.size();
  }
  std::string text = boost::json::serialize(line) + '\n';
  for (std::size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

boost::json::value HttpResponse::json() const { return boost::json::parse(body); }

std::string HttpResponse::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

std::string str(const boost::json::value& v, std::string_view key) {
  const auto& member = v.as_object().at(key);
  return member.is_string() ? std::string(member.get_string()) : boost::json::serialize(member);
}

struct HttpClient::Impl {
  explicit Impl(unsigned short port) : port(port) {}

  void connect() {
    socket = std::make_unique<tcp::socket>(ioc);
    socket->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    socket->set_option(tcp::no_delay(true));
    set_timeout(*socket, 90000);  // longer than the longest long-poll (60 s)
    buffer.clear();
  }

  asio::io_context ioc;
  unsigned short port;
  std::unique_ptr<tcp::socket> socket;
  beast::flat_buffer buffer;
};

HttpClient::HttpClient(unsigned short port) : impl_(std::make_unique<Impl>(port)) {}

HttpClient::~HttpClient() = default;

HttpResponse HttpClient::request(std::string_view method, std::string_view target,
                                 std::string_view body, const Headers& headers) {
  bhttp::request<bhttp::string_body> req;
  req.method_string(method);
  req.target(target);
  req.version(11);
  req.set(bhttp::field::host, "127.0.0.1");
  for (const auto& [k, v] : headers) req.set(k, v);
  if (!body.empty()) {
    // JSON unless the caller named a type (the SQS tests sign theirs).
    if (req.find(bhttp::field::content_type) == req.end()) {
      req.set(bhttp::field::content_type, "application/json");
    }
    req.body() = std::string(body);
  }
  req.prepare_payload();

  // A kept-alive connection the server has since closed (idle timeout) fails before anything
  // of the answer arrives: reconnect once and send again.
  for (int attempt = 0;; ++attempt) {
    bool reused = impl_->socket && impl_->socket->is_open();
    if (!reused) impl_->connect();
    try {
      bhttp::write(*impl_->socket, req);
      bhttp::response_parser<bhttp::string_body> parser;
      parser.body_limit(64 * 1024 * 1024);
      if (method == "HEAD") parser.skip(true);
      bhttp::read(*impl_->socket, impl_->buffer, parser);
      auto& res = parser.get();
      HttpResponse out;
      out.status = static_cast<int>(res.result_int());
      for (const auto& field : res) {
        std::string name(field.name_string());
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        out.headers[name] = std::string(field.value());
      }
      out.body = std::move(res.body());
      if (!res.keep_alive()) {
        beast::error_code ec;
        impl_->socket->close(ec);
      }
      record(method, target, out);
      return out;
    } catch (const boost::system::system_error&) {
      beast::error_code ec;
      impl_->socket->close(ec);
      if (!reused || attempt > 0) throw;
    }
  }
}

HttpResponse HttpClient::post(std::string_view target, const boost::json::value& body,
                              const Headers& headers) {
  return request("POST", target, boost::json::serialize(body), headers);
}

std::string HttpClient::raw(std::string_view bytes, int timeout_ms) {
  tcp::socket s(impl_->ioc);
  s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), impl_->port));
  asio::write(s, asio::buffer(bytes.data(), bytes.size()));
  // Asio's blocking reads ignore SO_RCVTIMEO (they poll without a timeout): wait with poll().
  std::string out;
  char buf[4096];
  for (;;) {
    pollfd p{s.native_handle(), POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) break;  // quiet for timeout_ms: done
    ssize_t n = ::recv(s.native_handle(), buf, sizeof buf, 0);
    if (n <= 0) break;  // closed by the server
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

}  // namespace dlq::test
