// The load generator's HTTP connection: one request at a time, timed from write to full answer.
#include "client.hpp"

#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http.hpp>

namespace dlq::bench {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

Client::Client(asio::any_io_executor ex, asio::ip::tcp::endpoint endpoint)
    : endpoint_(endpoint), stream_(std::move(ex)) {}

asio::awaitable<void> Client::ensure_connected() {
  if (connected_) co_return;
  if (timeout_.count() > 0) stream_.expires_after(timeout_);
  co_await stream_.async_connect(endpoint_, asio::use_awaitable);
  stream_.socket().set_option(asio::ip::tcp::no_delay(true));
  buffer_.clear();
  connected_ = true;
}

void Client::close() {
  beast::error_code ec;
  stream_.socket().close(ec);
  connected_ = false;
}

asio::awaitable<Reply> Client::request(http::verb method, std::string target, std::string body,
                                       std::string request_id) {
  co_await ensure_connected();
  if (timeout_.count() > 0) stream_.expires_after(timeout_);
  http::request<http::string_body> req{method, target, 11};
  req.set(http::field::host, "127.0.0.1");
  if (!token_.empty()) req.set(http::field::authorization, "Bearer " + token_);
  if (!request_id.empty()) req.set("X-Request-Id", request_id);
  if (!body.empty()) {
    req.set(http::field::content_type, "application/json");
    req.body() = std::move(body);
  }
  req.prepare_payload();
  auto start = std::chrono::steady_clock::now();
  co_await http::async_write(stream_, req, asio::use_awaitable);
  http::response<http::string_body> res;
  co_await http::async_read(stream_, buffer_, res, asio::use_awaitable);
  Reply reply;
  reply.latency = std::chrono::steady_clock::now() - start;
  reply.status = static_cast<int>(res.result_int());
  reply.body = std::move(res.body());
  if (!res.keep_alive()) close();
  co_return reply;
}

}  // namespace dlq::bench
