// The HTTP/1.1 session loop: timeouts, limits (what one connection may hold: architecture.md,
// "Bounds"), early errors, keep-alive, lingering close, and the client watch that notices a
// client hanging up during a long-poll.
#include "http/session.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "http/framing.hpp"
#include "http/problem.hpp"
#include "http/wire.hpp"
#include "model/logging.hpp"

namespace dlq::http {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using asio::use_awaitable;

std::uint64_t ServerState::add_closer(std::function<void()> close) {
  std::lock_guard lock(mu_);
  std::uint64_t id = next_id_++;
  closers_.emplace(id, std::move(close));
  return id;
}

void ServerState::remove_closer(std::uint64_t id) {
  std::lock_guard lock(mu_);
  closers_.erase(id);
}

void ServerState::close_all() {
  std::vector<std::function<void()>> all;
  {
    std::lock_guard lock(mu_);
    for (auto& [id, close] : closers_) all.push_back(close);
  }
  for (auto& close : all) close();
}

namespace {

constexpr std::size_t kHeaderLimit = 16 * 1024;
// The most a connection reads ahead of what the parser consumed: a request head (16 KiB), a
// chunk-size line with its extensions, a trailer section, bytes pipelined behind a long-poll.
// Beast bounds none but the head; a full buffer ends the read with buffer_overflow.
constexpr std::size_t kReadBufferLimit = 64 * 1024;

std::chrono::milliseconds seconds(double s) {
  return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

// The connection, shared by the session coroutine, the client watch and the closer.
struct Connection : std::enable_shared_from_this<Connection> {
  explicit Connection(asio::ip::tcp::socket socket)
      : stream(std::move(socket)), buffer(kReadBufferLimit), watch_done(stream.get_executor()) {}

  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  // ClientWatch state (session strand only).
  asio::steady_timer watch_done;
  bool watching = false;
  bool watch_running = false;
  bool client_gone = false;
};

// Reads from the socket while a handler waits, until the client closes or the watch is
// stopped: an orderly close or a reset means the client is gone; bytes (a pipelined request)
// stay in the buffer for the next parse. A client that pipelines more than the buffer holds
// behind a long-poll (RFC 9112 section 9.3.2 advises against pipelining after a POST at all)
// is treated as gone too: the watch could no longer see it leave.
class ConnectionWatch final : public ClientWatch {
 public:
  explicit ConnectionWatch(std::shared_ptr<Connection> c) : c_(std::move(c)) {}

  void start(std::function<void()> on_gone) override {
    c_->watching = true;
    c_->watch_running = true;
    asio::co_spawn(c_->stream.get_executor(), watch(c_, std::move(on_gone)), asio::detached);
  }

  asio::awaitable<void> stop() override {
    if (!c_->watching) co_return;
    c_->watching = false;
    if (c_->watch_running) {
      beast::error_code ec;
      c_->stream.socket().cancel(ec);
      while (c_->watch_running) {
        c_->watch_done.expires_after(std::chrono::seconds(5));
        co_await c_->watch_done.async_wait(asio::as_tuple(use_awaitable));
      }
    }
  }

  bool gone() const override { return c_->client_gone; }

 private:
  static asio::awaitable<void> watch(std::shared_ptr<Connection> c, std::function<void()> on_gone) {
    while (c->watching) {
      std::size_t room = c->buffer.max_size() - c->buffer.size();
      beast::error_code ec;
      std::size_t n = 0;
      if (room == 0) {
        ec = bhttp::error::buffer_overflow;
      } else {
        std::tie(ec, n) = co_await c->stream.socket().async_read_some(
            c->buffer.prepare(std::min<std::size_t>(room, 4096)), asio::as_tuple(use_awaitable));
      }
      if (!ec) {
        c->buffer.commit(n);
        continue;
      }
      if (ec != asio::error::operation_aborted) {
        c->client_gone = true;
        on_gone();
      }
      break;
    }
    c->watch_running = false;
    c->watch_done.cancel();
  }

  std::shared_ptr<Connection> c_;
};

using RequestParser = bhttp::request_parser<bhttp::string_body>;

// Errors before a request could be routed (malformed HTTP, oversized body).
Response early_problem(const Config& config, int status, std::string_view slug,
                       std::string_view title, std::string_view detail, std::string_view error,
                       const std::string& path) {
  Response r = problem({config.problem_base, path}, status, slug, title, detail, error);
  r.close = true;
  return r;
}

// After an early error the client may still be sending a body we will not read; closing at
// once would reset the connection and could destroy our answer before the client reads it.
// Half-close, then discard what arrives for a moment (a "lingering close").
asio::awaitable<void> linger(beast::tcp_stream& stream) {
  beast::error_code ec;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
  stream.expires_after(std::chrono::seconds(2));
  std::array<char, 16384> scratch{};
  std::size_t total = 0;
  while (total < 16 * 1024 * 1024) {
    auto [rec, n] = co_await stream.async_read_some(asio::buffer(scratch),
                                                    asio::as_tuple(use_awaitable));
    if (rec) break;
    total += n;
  }
}

// What reading one request gave: a request to handle (neither member set), an answer to give
// at once, or nothing to answer (the client left or stalled).
struct Incoming {
  std::optional<Response> early;
  bool ended = false;
};

std::optional<Response> framing_problem(const Config& config, const RequestParser& parser,
                                        const std::string& path) {
  const auto& head = parser.get();
  std::vector<std::string_view> codings;
  auto [first, last] = head.equal_range(bhttp::field::transfer_encoding);
  for (auto it = first; it != last; ++it) codings.push_back(it->value());
  auto problem = check_framing(head.version(), codings, head.count(bhttp::field::host),
                               head.count(bhttp::field::authorization));
  if (!problem) return std::nullopt;
  return early_problem(config, problem->status, problem->slug, problem->title, problem->detail,
                       problem->error, path);
}

// Reads the next request's head, checks its framing, then reads its body: all of it within
// the header timeout, none of it beyond the connection's buffer and the body limit.
asio::awaitable<Incoming> read_request(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                       RequestParser& parser, const Config& config) {
  Incoming in;
  // Wait for the next request up to the idle timeout, then give it the header timeout.
  if (buffer.size() == 0) {
    stream.expires_after(seconds(config.limits.idle_timeout_seconds));
    auto [ec, n] = co_await stream.async_read_some(buffer.prepare(8192),
                                                   asio::as_tuple(use_awaitable));
    in.ended = static_cast<bool>(ec);
    if (in.ended) co_return in;
    buffer.commit(n);
  }
  stream.expires_after(seconds(config.limits.header_timeout_seconds));
  auto [ec, hn] = co_await bhttp::async_read_header(stream, buffer, parser,
                                                    asio::as_tuple(use_awaitable));
  // The path as received once the request line was read (Beast keeps it after later errors).
  std::string target(parser.get().target());
  std::string path = target.empty() ? "/" : target.substr(0, target.find('?'));
  if (!ec) {
    in.early = framing_problem(config, parser, path);
    if (in.early) co_return in;
    if (parser.get()[bhttp::field::expect] == "100-continue" && !parser.is_done()) {
      bhttp::response<bhttp::empty_body> cont{bhttp::status::continue_, parser.get().version()};
      stream.expires_after(seconds(config.limits.write_timeout_seconds));
      auto [wec, wn] = co_await bhttp::async_write(stream, cont, asio::as_tuple(use_awaitable));
      in.ended = static_cast<bool>(wec);
      if (in.ended) co_return in;
      stream.expires_after(seconds(config.limits.header_timeout_seconds));
    }
    std::tie(ec, std::ignore) = co_await bhttp::async_read(stream, buffer, parser,
                                                           asio::as_tuple(use_awaitable));
  }
  if (!ec) co_return in;
  if (ec == bhttp::error::body_limit) {
    in.early = early_problem(config, 413, "payload-too-large", "Payload too large",
                             "the request body exceeds limits.max_body_bytes (" +
                                 std::to_string(config.limits.max_body_bytes) + " bytes)",
                             "request body too large", path);
  } else if (ec == bhttp::error::header_limit) {
    in.early = early_problem(config, 431, "headers-too-large", "Request headers too large",
                             "the request headers exceed 16 KiB", "request headers too large",
                             path);
  } else if (ec == bhttp::error::buffer_overflow) {
    in.early = early_problem(config, 400, "bad-request", "Bad request",
                             "a chunk-size line or the trailer section exceeds 64 KiB",
                             "malformed HTTP request", path);
  } else if (ec == beast::error::timeout || ec == asio::error::eof ||
             ec == bhttp::error::end_of_stream || ec == asio::error::connection_reset ||
             ec == asio::error::operation_aborted || ec == bhttp::error::partial_message) {
    in.ended = true;  // the client went away or stalled: nothing to answer
  } else {
    in.early = early_problem(config, 400, "bad-request", "Bad request",
                             "the request is not valid HTTP/1.1: " + ec.message(),
                             "malformed HTTP request", path);
  }
  co_return in;
}

}  // namespace

asio::awaitable<void> run_session(asio::ip::tcp::socket socket, ServerState& state) {
  const Config& config = state.config;
  auto conn = std::make_shared<Connection>(std::move(socket));
  std::weak_ptr<Connection> weak = conn;
  auto closer_id = state.add_closer([weak] {
    if (auto c = weak.lock()) {
      asio::post(c->stream.get_executor(), [c] {
        beast::error_code ec;
        c->stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
        c->stream.socket().close(ec);
      });
    }
  });
  struct Leave {
    ServerState& state;
    std::uint64_t id;
    ~Leave() {
      state.remove_closer(id);
      state.lifecycle.connection_closed();
    }
  } leave{state, closer_id};

  beast::tcp_stream& stream = conn->stream;
  beast::flat_buffer& buffer = conn->buffer;
  ConnectionWatch watch(conn);

  for (;;) {
    RequestParser parser;
    parser.body_limit(static_cast<std::uint64_t>(config.limits.max_body_bytes));
    parser.header_limit(kHeaderLimit);
    Incoming in = co_await read_request(stream, buffer, parser, config);
    if (in.ended) break;

    Response response;
    wire::AnswerOptions answer;
    answer.write_timeout = seconds(config.limits.write_timeout_seconds);
    if (in.early) {
      response = std::move(*in.early);
      answer.request_id = wire::generate_request_id();
    } else {
      auto& message = parser.get();
      answer.version = message.version();
      answer.keep_alive = message.keep_alive();
      answer.head = message.method() == bhttp::verb::head;
      Request request = wire::to_request(parser.release());
      request.watch = &watch;
      answer.request_id = request.request_id;
      state.lifecycle.request_started();
      if (state.lifecycle.shutting_down()) {
        response = early_problem(config, 503, "shutting-down", "Shutting down",
                                 "the server is shutting down; retry later",
                                 "server is shutting down", request.path);
      } else {
        stream.expires_never();  // a long-poll may wait up to a minute
        response = co_await state.api.handle(request);
      }
      state.lifecycle.request_ended();
      if (log::enabled(log::Level::debug)) {
        log::debug("request", {{"method", request.method},
                               {"path", request.path},
                               {"status", std::to_string(response.status)},
                               {"request_id", answer.request_id}});
      }
      if (conn->client_gone) break;  // nobody to answer
    }
    if (state.lifecycle.shutting_down()) response.close = true;
    bool keep = co_await wire::write_answer(stream, std::move(response), answer);
    if (!keep) {
      if (in.early) co_await linger(stream);
      break;
    }
  }
  beast::error_code ec;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
}

}  // namespace dlq::http
