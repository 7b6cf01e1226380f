// One keep-alive HTTP/1.1 client connection for the load generator: Beast coroutines, far
// cheaper per request than the server, so the generator does not become the bottleneck.
#pragma once

#include <chrono>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/verb.hpp>

namespace dlq::bench {

struct Reply {
  int status = 0;
  std::string body;
  std::chrono::nanoseconds latency{0};
};

class Client {
 public:
  Client(boost::asio::any_io_executor ex, boost::asio::ip::tcp::endpoint endpoint);
  // `request_id` (if any) goes out as X-Request-Id.
  boost::asio::awaitable<Reply> request(boost::beast::http::verb method, std::string target,
                                        std::string body = {}, std::string request_id = {});
  // A limit on each connect and request (0: none); one past it throws, as a dropped connection does.
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }
  // Connects if not connected (request() does it too): a failure here means nothing was sent.
  boost::asio::awaitable<void> connect() { return ensure_connected(); }
  void close();
  // Every client of this process sends `Authorization: Bearer <token>` (empty: none).
  static void use_token(std::string token) { token_ = std::move(token); }

 private:
  static inline std::string token_;
  boost::asio::awaitable<void> ensure_connected();

  boost::asio::ip::tcp::endpoint endpoint_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  bool connected_ = false;
  std::chrono::milliseconds timeout_{0};
};

}  // namespace dlq::bench
