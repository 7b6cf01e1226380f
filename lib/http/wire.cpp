// Request conversion and answer writing: whole answers with Content-Length, streamed ones with
// chunked transfer coding (HTTP/1.0: until the connection closes), every write on a deadline.
#include "http/wire.hpp"

#include <random>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/write.hpp>

#include "model/logging.hpp"

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
  if (!r.body.empty() || r.stream) res.set(bhttp::field::content_type, r.content_type);
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

asio::awaitable<bool> write_chunk(beast::tcp_stream& stream, const std::string& data,
                                  const AnswerOptions& o) {
  stream.expires_after(o.write_timeout);
  beast::error_code ec;
  if (o.version >= 11) {
    std::tie(ec, std::ignore) = co_await asio::async_write(
        stream, bhttp::make_chunk(asio::buffer(data)), asio::as_tuple(use_awaitable));
  } else {
    std::tie(ec, std::ignore) =
        co_await asio::async_write(stream, asio::buffer(data), asio::as_tuple(use_awaitable));
  }
  co_return !ec;
}

// Pieces are gathered up to kChunkBytes, written, and only then is the next piece asked for.
asio::awaitable<bool> write_streamed(beast::tcp_stream& stream, Response& r,
                                     const AnswerOptions& o) {
  bhttp::response<bhttp::empty_body> res{static_cast<bhttp::status>(r.status), o.version};
  set_headers(res, r, o);
  if (o.version >= 11) {
    res.chunked(true);
  } else {
    res.keep_alive(false);  // HTTP/1.0 has no chunks: the body ends with the connection
  }
  bhttp::response_serializer<bhttp::empty_body> header{res};
  stream.expires_after(o.write_timeout);
  auto [hec, hn] = co_await bhttp::async_write_header(stream, header, asio::as_tuple(use_awaitable));
  if (hec) co_return false;
  std::string pending = std::move(r.body);
  for (bool end = false; !end;) {
    while (!end && pending.size() < kChunkBytes) {
      std::string piece = co_await r.stream->next();
      end = piece.empty();
      pending += piece;
    }
    if (!pending.empty() && !co_await write_chunk(stream, pending, o)) co_return false;
    pending.clear();
  }
  if (o.version < 11) co_return false;
  stream.expires_after(o.write_timeout);
  auto [lec, ln] = co_await asio::async_write(stream, bhttp::make_chunk_last(),
                                              asio::as_tuple(use_awaitable));
  co_return !lec && res.keep_alive();
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
  try {
    if (!response.stream) {
      std::size_t length = response.body.size();
      co_return co_await write_whole(stream, response, options, length);
    }
    if (options.head) {
      // Count what GET would send without holding it.
      std::size_t length = response.body.size();
      response.body.clear();
      for (;;) {
        std::string piece = co_await response.stream->next();
        if (piece.empty()) break;
        length += piece.size();
      }
      co_return co_await write_whole(stream, response, options, length);
    }
    co_return co_await write_streamed(stream, response, options);
  } catch (const std::exception& e) {
    // A streamed body failed after its status line went out: all we can do is end the
    // connection, which tells the client the answer is incomplete.
    log::error("answer could not be completed",
               {{"request_id", options.request_id}, {"error", e.what()}});
    co_return false;
  }
}

}  // namespace dlq::http::wire
