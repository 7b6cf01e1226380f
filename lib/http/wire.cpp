// Request conversion and answer writing: whole answers with Content-Length, streamed ones with
// chunked transfer coding (HTTP/1.0: until the connection closes), every write on a deadline.
#include "http/wire.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <random>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/status.hpp>

#include "model/logging.hpp"

namespace dlq::http::wire {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using asio::use_awaitable;

namespace {

// Only these request headers reach the handlers.
constexpr std::string_view kForwardedHeaders[] = {"x-request-id", "x-now", "authorization"};

// A request in AWS's shape (an X-Amz-Target, an X-Amz-Date or a SigV4 Authorization): the SQS
// front's, whose signature may cover any header.
bool aws_request(const bhttp::request<bhttp::string_body>& in) {
  if (in.find("x-amz-target") != in.end() || in.find("x-amz-date") != in.end()) return true;
  auto auth = in.find(bhttp::field::authorization);
  return auth != in.end() && auth->value().starts_with("AWS4-");
}

bool valid_request_id(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// Fields every answer carries, besides its Content-Type and X-Request-Id.
constexpr std::pair<std::string_view, std::string_view> kFixedFields[] = {
    {"X-Content-Type-Options", "nosniff"}, {"Cache-Control", "no-store"}};

// A status without a body (RFC 9110 sections 6.4.1, 15.3.5, 15.4.5): no Content-Length either.
bool bodiless(int status) { return status < 200 || status == 204 || status == 304; }

bool keep_alive(const Response& r, const AnswerOptions& o) { return o.keep_alive && !r.close; }

asio::awaitable<bool> write_head(beast::tcp_stream& stream, const std::string& head,
                                 const AnswerOptions& o) {
  stream.expires_after(o.write_timeout);
  auto [ec, n] = co_await asio::async_write(stream, asio::buffer(head), asio::as_tuple(use_awaitable));
  co_return !ec;
}

// One write for a whole answer: its head, then its body (none for HEAD).
asio::awaitable<bool> write_whole(beast::tcp_stream& stream, Response& r, const AnswerOptions& o,
                                  std::size_t content_length) {
  std::string head = format_head(r, o, content_length);
  bool send_body = !o.head && !bodiless(r.status);
  std::array<asio::const_buffer, 2> pieces{asio::buffer(head),
                                           asio::buffer(r.body.data(), send_body ? r.body.size() : 0)};
  stream.expires_after(o.write_timeout);
  auto [ec, n] = co_await asio::async_write(stream, pieces, asio::as_tuple(use_awaitable));
  co_return !ec && keep_alive(r, o);
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
  if (!co_await write_head(stream, format_head(r, o, std::nullopt), o)) co_return false;
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
  co_return !lec && keep_alive(r, o);
}

}  // namespace

std::string format_head(const Response& r, const AnswerOptions& o,
                        std::optional<std::size_t> content_length) {
  std::string head;
  head.reserve(192 + r.content_type.size() + o.request_id.size());
  auto field = [&head](std::string_view name, std::string_view value) {
    head.append(name).append(": ").append(value).append("\r\n");
  };
  // A handler's header replaces a default of the same name (the UI sets its own Cache-Control).
  auto field_unless_set = [&](std::string_view name, std::string_view value) {
    for (const auto& h : r.headers) {
      if (beast::iequals(h.first, name)) return;
    }
    field(name, value);
  };
  head.append(o.version >= 11 ? "HTTP/1.1 " : "HTTP/1.0 ")
      .append(std::to_string(r.status))
      .append(" ")
      .append(bhttp::obsolete_reason(static_cast<bhttp::status>(r.status)))
      .append("\r\n");
  if (!r.body.empty() || r.stream) field_unless_set("Content-Type", r.content_type);
  field_unless_set("X-Request-Id", o.request_id);
  for (auto [name, value] : kFixedFields) field_unless_set(name, value);
  for (const auto& [name, value] : r.headers) field(name, value);
  // HTTP/1.0 has no chunks: a streamed body ends with the connection.
  bool keep = keep_alive(r, o) && (content_length || o.version >= 11);
  if (o.version >= 11 && !keep) field("Connection", "close");
  if (o.version < 11 && keep) field("Connection", "keep-alive");
  if (!content_length) {
    if (o.version >= 11) field("Transfer-Encoding", "chunked");
  } else if (!bodiless(r.status)) {
    field("Content-Length", std::to_string(*content_length));
  }
  head.append("\r\n");
  return head;
}

Request to_request(bhttp::request<bhttp::string_body>&& in) {
  Request r;
  r.method = std::string(in.method_string());
  r.target = std::string(in.target());
  split_target(r.target, r.path, r.query);
  if (aws_request(in)) {
    // The SQS front: SigV4 may sign any header, so every one reaches it (names in lower case,
    // a repeated name's values joined with ',').
    for (const auto& field : in) {
      std::string name(field.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto same = std::find_if(r.headers.begin(), r.headers.end(),
                               [&](const auto& h) { return h.first == name; });
      if (same != r.headers.end()) {
        same->second.append(",").append(field.value());
      } else {
        r.headers.emplace_back(std::move(name), std::string(field.value()));
      }
    }
  } else {
    for (std::string_view name : kForwardedHeaders) {
      auto it = in.find(name);
      if (it != in.end()) r.headers.emplace_back(std::string(name), std::string(it->value()));
    }
  }
  // Copied only when present: a request without Origin (curl, SDKs, dlqctl) allocates nothing
  // for them, and a Host of up to 15 bytes ("127.0.0.1:65535") fits in the string itself.
  auto take = [&in](std::string_view name, std::optional<std::string>& out) {
    auto it = in.find(name);
    if (it != in.end()) out.emplace(it->value());
  };
  take("host", r.host);
  take("origin", r.origin);
  take("sec-fetch-site", r.fetch_site);
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
