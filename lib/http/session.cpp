// The HTTP/1.1 session loop: timeouts, limits, early errors, keep-alive, lingering close, and
// the client watch that notices a client hanging up during a long-poll.
#include "http/session.hpp"

#include <random>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "http/problem.hpp"
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

std::chrono::milliseconds seconds(double s) {
  return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

// The connection, shared by the session coroutine, the client watch and the closer.
struct Connection : std::enable_shared_from_this<Connection> {
  explicit Connection(asio::ip::tcp::socket socket)
      : stream(std::move(socket)), watch_done(stream.get_executor()) {}

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

Request to_request(const bhttp::request<bhttp::string_body>& in) {
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
  r.body = in.body();
  return r;
}

bhttp::response<bhttp::string_body> to_beast(Response&& r, unsigned version, bool keep_alive,
                                             const std::string& request_id) {
  bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(r.status), version};
  if (!r.body.empty()) res.set(bhttp::field::content_type, r.content_type);
  res.set("X-Request-Id", request_id);
  res.set("X-Content-Type-Options", "nosniff");
  res.set(bhttp::field::cache_control, "no-store");
  for (auto& [name, value] : r.headers) res.set(name, value);
  res.keep_alive(keep_alive && !r.close);
  res.body() = std::move(r.body);
  res.prepare_payload();
  return res;
}

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

}  // namespace

asio::awaitable<void> run_session(asio::ip::tcp::socket socket, ServerState& state) {
  const Config& config = state.config;
  auto conn = std::make_shared<Connection>(std::move(socket));
  ++state.connections;
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
      --state.connections;
    }
  } leave{state, closer_id};

  beast::tcp_stream& stream = conn->stream;
  beast::flat_buffer& buffer = conn->buffer;
  ConnectionWatch watch(conn);

  for (;;) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.body_limit(static_cast<std::uint64_t>(config.limits.max_body_bytes));
    parser.header_limit(kHeaderLimit);

    // Wait for the next request up to the idle timeout, then give it the header timeout.
    if (buffer.size() == 0) {
      stream.expires_after(seconds(config.limits.idle_timeout_seconds));
      auto [ec, n] = co_await stream.async_read_some(buffer.prepare(8192),
                                                     asio::as_tuple(use_awaitable));
      if (ec) break;
      buffer.commit(n);
    }
    stream.expires_after(seconds(config.limits.header_timeout_seconds));
    auto [hec, hn] = co_await bhttp::async_read_header(stream, buffer, parser,
                                                       asio::as_tuple(use_awaitable));
    std::optional<Response> early;
    std::string path = "/";
    if (!hec) {
      std::string target(parser.get().target());
      path = target.substr(0, target.find('?'));
      if (parser.get()[bhttp::field::expect] == "100-continue" && !parser.is_done()) {
        bhttp::response<bhttp::empty_body> cont{bhttp::status::continue_, parser.get().version()};
        auto [wec, wn] = co_await bhttp::async_write(stream, cont, asio::as_tuple(use_awaitable));
        if (wec) break;
      }
      auto [bec, bn] = co_await bhttp::async_read(stream, buffer, parser,
                                                  asio::as_tuple(use_awaitable));
      hec = bec;
    }
    if (hec == bhttp::error::body_limit) {
      early = early_problem(config, 413, "payload-too-large", "Payload too large",
                            "the request body exceeds limits.max_body_bytes (" +
                                std::to_string(config.limits.max_body_bytes) + " bytes)",
                            "request body too large", path);
    } else if (hec == bhttp::error::header_limit) {
      early = early_problem(config, 431, "headers-too-large", "Request headers too large",
                            "the request headers exceed 16 KiB", "request headers too large", path);
    } else if (hec == beast::error::timeout || hec == asio::error::eof ||
               hec == bhttp::error::end_of_stream || hec == asio::error::connection_reset ||
               hec == asio::error::operation_aborted || hec == bhttp::error::partial_message) {
      break;  // the client went away or stalled: nothing to answer
    } else if (hec) {
      early = early_problem(config, 400, "bad-request", "Bad request",
                            "the request is not valid HTTP/1.1: " + hec.message(),
                            "malformed HTTP request", path);
    }

    Response response;
    std::string request_id;
    unsigned version = 11;
    bool keep_alive = false;
    bool head = false;
    if (early) {
      response = std::move(*early);
      request_id = generate_request_id();
    } else {
      auto& message = parser.get();
      version = message.version();
      keep_alive = message.keep_alive();
      head = message.method() == bhttp::verb::head;
      Request request = to_request(message);
      request.watch = &watch;
      request_id = request.request_id;
      ++state.requests_in_flight;
      if (state.shutting_down) {
        response = early_problem(config, 503, "shutting-down", "Shutting down",
                                 "the server is shutting down; retry later",
                                 "server is shutting down", request.path);
      } else {
        stream.expires_never();  // a long-poll may wait up to a minute
        response = co_await state.api.handle(request);
      }
      --state.requests_in_flight;
      if (log::enabled(log::Level::debug)) {
        log::debug("request", {{"method", request.method},
                               {"path", request.path},
                               {"status", std::to_string(response.status)},
                               {"request_id", request_id}});
      }
      if (conn->client_gone) break;  // nobody to answer
    }
    if (state.shutting_down) response.close = true;
    bool close = response.close || !keep_alive;
    auto res = to_beast(std::move(response), version, keep_alive, request_id);
    stream.expires_after(seconds(config.limits.idle_timeout_seconds));
    beast::error_code wec;
    if (head) {
      bhttp::response<bhttp::empty_body> head_res{std::move(res.base())};
      std::tie(wec, std::ignore) =
          co_await bhttp::async_write(stream, head_res, asio::as_tuple(use_awaitable));
    } else {
      std::tie(wec, std::ignore) =
          co_await bhttp::async_write(stream, res, asio::as_tuple(use_awaitable));
    }
    if (wec) break;
    if (close) {
      if (early) co_await linger(stream);
      break;
    }
  }
  beast::error_code ec;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
}

}  // namespace dlq::http
