// The blocking Beast client behind dlqctl: resolve, then connect, (TLS handshake,) write and
// read, each bounded by the --timeout deadline; every failure to get an answer is Unreachable.
#include "client.hpp"

#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace dlq::ctl {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

Client::Client(ServerUrl url, std::string token, std::chrono::milliseconds timeout, std::string ca_file)
    : url_(std::move(url)), token_(std::move(token)), timeout_(timeout), ca_file_(std::move(ca_file)) {}

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

namespace {

// Write the request, read the answer: the same on a plain and a TLS stream.
template <class Stream>
Reply exchange(asio::io_context& ioc, Stream& stream, http::request<http::string_body>& req,
               std::chrono::milliseconds timeout, const std::string& where, const std::string& late) {
  beast::get_lowest_layer(stream).expires_after(timeout);
  auto ec = run_step(ioc, [&](auto done) { http::async_write(stream, req, std::move(done)); });
  if (ec == beast::error::timeout) throw Unreachable(late);
  if (ec) throw Unreachable("sending to " + where + " failed: " + ec.message());

  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(256 * 1024 * 1024);
  beast::get_lowest_layer(stream).expires_after(timeout);
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
  beast::get_lowest_layer(stream).socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  return reply;
}

}  // namespace

Reply Client::request(std::string_view method, const std::string& target, const std::string& body) {
  asio::io_context ioc;
  const std::string where = url_.host + ":" + url_.port;
  beast::error_code ec;
  asio::ip::tcp::resolver resolver(ioc);
  auto endpoints = resolver.resolve(url_.host, url_.port, ec);
  if (ec) throw Unreachable("cannot resolve " + url_.host + ": " + ec.message());
  const std::string late = "no answer from " + where + " within " +
                           std::to_string(static_cast<double>(timeout_.count()) / 1000.0).substr(0, 4) + " s";

  http::request<http::string_body> req{http::string_to_verb(method), url_.prefix + target, 11};
  const bool default_port = url_.port == (url_.tls ? "443" : "80");
  // Host writes an IPv6 literal in brackets (RFC 9110 section 7.2): "[::1]:8080", which is also
  // what dlqd's Host check reads as loopback.
  const std::string host =
      url_.host.find(':') == std::string::npos ? url_.host : "[" + url_.host + "]";
  req.set(http::field::host, default_port ? host : host + ":" + url_.port);
  req.set(http::field::user_agent, "dlqctl");
  if (!token_.empty()) req.set(http::field::authorization, "Bearer " + token_);
  if (!body.empty()) {
    req.set(http::field::content_type, "application/json");
    req.body() = body;
  }
  req.prepare_payload();

  auto connect = [&](beast::tcp_stream& tcp) {
    tcp.expires_after(timeout_);
    ec = run_step(ioc, [&](auto done) { tcp.async_connect(endpoints, std::move(done)); });
    if (ec == beast::error::timeout) throw Unreachable(late);
    if (ec) throw Unreachable("cannot connect to " + where + ": " + ec.message());
  };
  if (!url_.tls) {
    beast::tcp_stream stream(ioc);
    connect(stream);
    return exchange(ioc, stream, req, timeout_, where, late);
  }
  // https: the server's certificate must chain to the CA file (or the system's store) and name
  // the host we asked for.
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  ctx.set_verify_mode(asio::ssl::verify_peer);
  if (ca_file_.empty()) {
    ctx.set_default_verify_paths();
  } else {
    ctx.load_verify_file(ca_file_, ec);
    if (ec) throw UsageError("--ca-file " + ca_file_ + " cannot be read: " + ec.message());
  }
  beast::ssl_stream<beast::tcp_stream> stream(ioc, ctx);
  if (!SSL_set_tlsext_host_name(stream.native_handle(), url_.host.c_str())) {
    throw Unreachable("cannot set the TLS server name " + url_.host);
  }
  stream.set_verify_callback(asio::ssl::host_name_verification(url_.host));
  connect(beast::get_lowest_layer(stream));
  beast::get_lowest_layer(stream).expires_after(timeout_);
  ec = run_step(ioc, [&](auto done) { stream.async_handshake(asio::ssl::stream_base::client, std::move(done)); });
  if (ec == beast::error::timeout) throw Unreachable(late);
  if (ec) throw Unreachable("TLS with " + where + " failed: " + ec.message());
  return exchange(ioc, stream, req, timeout_, where, late);
}

}  // namespace dlq::ctl
