// The blocking Beast client behind dlqctl: resolve, then connect, write and read, each bounded
// by the --timeout deadline; every failure to get an answer becomes Unreachable.
#include "client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace dlq::ctl {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

ServerUrl ServerUrl::parse(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.starts_with("https://")) {
    throw UsageError("dlqctl speaks plain HTTP; reach a TLS-fronted dlqd through a local "
                     "tunnel or run dlqctl where dlqd listens (see README, dlqctl)");
  }
  if (!url.starts_with(kScheme)) throw UsageError("--url must start with http://: " + std::string(url));
  url.remove_prefix(kScheme.size());
  ServerUrl out;
  auto slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  if (slash != std::string_view::npos) out.prefix = std::string(url.substr(slash));
  while (!out.prefix.empty() && out.prefix.back() == '/') out.prefix.pop_back();
  if (authority.empty()) throw UsageError("--url has no host: http://" + std::string(url));
  std::string_view host = authority;
  if (authority.front() == '[') {  // [::1]:8080
    auto close = authority.find(']');
    if (close == std::string_view::npos) throw UsageError("--url: unclosed [ in the host");
    host = authority.substr(1, close - 1);
    auto rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') throw UsageError("--url: expected :port after ]");
      out.port = std::string(rest.substr(1));
    }
  } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    out.port = std::string(authority.substr(colon + 1));
  }
  if (host.empty() || out.port.empty() ||
      out.port.find_first_not_of("0123456789") != std::string::npos || out.port.size() > 5) {
    throw UsageError("--url: expected http://HOST[:PORT], got http://" + std::string(authority));
  }
  out.host = std::string(host);
  return out;
}

Client::Client(ServerUrl url, std::string token, std::chrono::milliseconds timeout)
    : url_(std::move(url)), token_(std::move(token)), timeout_(timeout) {}

namespace {

// Runs one asynchronous step to completion: Beast's tcp_stream enforces expires_after() only on
// asynchronous operations, so each blocking step is an async one run on a private io_context.
template <class Start>
beast::error_code run_step(asio::io_context& ioc, Start start) {
  beast::error_code result;
  start([&result](beast::error_code ec, auto&&...) { result = ec; });
  ioc.run();
  ioc.restart();
  return result;
}

}  // namespace

Reply Client::request(std::string_view method, const std::string& target, const std::string& body) {
  asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  const std::string where = url_.host + ":" + url_.port;
  beast::error_code ec;
  asio::ip::tcp::resolver resolver(ioc);
  auto endpoints = resolver.resolve(url_.host, url_.port, ec);
  if (ec) throw Unreachable("cannot resolve " + url_.host + ": " + ec.message());
  const std::string late = "no answer from " + where + " within " +
                           std::to_string(static_cast<double>(timeout_.count()) / 1000.0).substr(0, 4) + " s";
  stream.expires_after(timeout_);
  ec = run_step(ioc, [&](auto done) { stream.async_connect(endpoints, std::move(done)); });
  if (ec == beast::error::timeout) throw Unreachable(late);
  if (ec) throw Unreachable("cannot connect to " + where + ": " + ec.message());

  http::request<http::string_body> req{http::string_to_verb(method), url_.prefix + target, 11};
  req.set(http::field::host, url_.port == "80" ? url_.host : where);
  req.set(http::field::user_agent, "dlqctl");
  if (!token_.empty()) req.set(http::field::authorization, "Bearer " + token_);
  if (!body.empty()) {
    req.set(http::field::content_type, "application/json");
    req.body() = body;
  }
  req.prepare_payload();
  stream.expires_after(timeout_);
  ec = run_step(ioc, [&](auto done) { http::async_write(stream, req, std::move(done)); });
  if (ec == beast::error::timeout) throw Unreachable(late);
  if (ec) throw Unreachable("sending to " + where + " failed: " + ec.message());

  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(256 * 1024 * 1024);
  stream.expires_after(timeout_);
  ec = run_step(ioc, [&](auto done) { http::async_read(stream, buffer, parser, std::move(done)); });
  if (ec == beast::error::timeout) throw Unreachable(late);
  if (ec) throw Unreachable("reading the answer from " + where + " failed: " + ec.message());
  auto res = parser.release();
  Reply reply;
  reply.status = static_cast<int>(res.result_int());
  reply.body = std::move(res.body());
  if (auto it = res.find(http::field::location); it != res.end()) {
    reply.location = std::string(it->value());
  }
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  return reply;
}

std::string url_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

}  // namespace dlq::ctl
