// Request conversion and answer writing, on a deadline.
#include "http/wire.hpp"

#include <random>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/write.hpp>

namespace dlq::http::wire {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using asio::use_awaitable;

namespace {

// Only these request headers reach the handlers.
constexpr std::string_view kForwardedHeaders[] = {"x-request-id", "x-now", "authorization"};

bool valid_request_id(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// The headers every answer carries; the body's framing is the caller's.
template <class Body>
void set_headers(bhttp::response<Body>& res, const Response& r, const AnswerOptions& o) {
  if (!r.body.empty()) res.set(bhttp::field::content_type, r.content_type);
  res.set("X-Request-Id", o.request_id);
  res.set("X-Content-Type-Options", "nosniff");
  res.set(bhttp::field::cache_control, "no-store");
  for (const auto& [name, value] : r.headers) res.set(name, value);
  res.keep_alive(o.keep_alive && !r.close);
}

template <class Message>
asio::awaitable<bool> write_message(beast::tcp_stream& stream, Message& message,
                                    const AnswerOptions& o) {
  stream.expires_after(o.write_timeout);
  auto [ec, n] = co_await bhttp::async_write(stream, message, asio::as_tuple(use_awaitable));
  co_return !ec;
}

asio::awaitable<bool> write_whole(beast::tcp_stream& stream, Response& r, const AnswerOptions& o,
                                  std::size_t head_length) {
  bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(r.status), o.version};
  set_headers(res, r, o);
  if (o.head) {
    // HEAD: Content-Length says what GET would send.
    bhttp::response<bhttp::empty_body> head{std::move(res.base())};
    head.content_length(head_length);
    co_return co_await write_message(stream, head, o) && head.keep_alive();
  }
  res.body() = std::move(r.body);
  res.prepare_payload();
  co_return co_await write_message(stream, res, o) && res.keep_alive();
}

}  // namespace

Request to_request(bhttp::request<bhttp::string_body>&& in) {
  Request r;
  r.method = std::string(in.method_string());
  r.target = std::string(in.target());
  split_target(r.target, r.path, r.query);
  for (std::string_view name : kForwardedHeaders) {
    auto it = in.find(name);
    if (it != in.end()) r.headers.emplace_back(std::string(name), std::string(it->value()));
  }
  const std::string* id = r.header("x-request-id");
  r.request_id = id && valid_request_id(*id) ? *id : generate_request_id();
  r.body = std::move(in.body());
  return r;
}

std::string generate_request_id() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::uint64_t v = engine();
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = kHex[v & 0xf];
    v >>= 4;
  }
  return out;
}

asio::awaitable<bool> write_answer(beast::tcp_stream& stream, Response response,
                                   const AnswerOptions& options) {
  std::size_t length = response.body.size();
  co_return co_await write_whole(stream, response, options, length);
}

}  // namespace dlq::http::wire
