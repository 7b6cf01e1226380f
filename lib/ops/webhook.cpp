// One POST per alert: resolve, connect, TLS handshake (verified, SNI), write, read the status.
#include "ops/webhook.hpp"

#include <openssl/ssl.h>

#include <stdexcept>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "config/webhook_url.hpp"

namespace dlq::ops {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::use_awaitable;

struct Webhook::Impl {
  bool tls = false;
  std::string host, port, target;
  std::chrono::milliseconds timeout;
  std::unique_ptr<asio::ssl::context> ssl;
};

Webhook::Webhook(const std::string& url, const std::string& ca_file,
                 std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  WebhookTarget t = parse_webhook_url(url);
  impl_->tls = t.tls;
  impl_->host = std::move(t.host);
  impl_->port = std::move(t.port);
  impl_->target = std::move(t.target);
  impl_->timeout = timeout;
  if (impl_->tls) {
    impl_->ssl = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
    impl_->ssl->set_verify_mode(asio::ssl::verify_peer);
    if (ca_file.empty()) {
      impl_->ssl->set_default_verify_paths();
    } else {
      boost::system::error_code ec;
      impl_->ssl->load_verify_file(ca_file, ec);
      if (ec) throw std::runtime_error("alerts.ca_file cannot be read: " + ec.message());
    }
  }
}

Webhook::~Webhook() = default;

const std::string& Webhook::host() const { return impl_->host; }

asio::awaitable<void> Webhook::post(asio::any_io_executor ex, std::string body) {
  const Impl& w = *impl_;
  asio::ip::tcp::resolver resolver(ex);
  auto endpoints = co_await resolver.async_resolve(w.host, w.port, use_awaitable);

  http::request<http::string_body> req{http::verb::post, w.target, 11};
  req.set(http::field::host, w.host);
  req.set(http::field::user_agent, "dlqd");
  req.set(http::field::content_type, "application/json");
  req.body() = std::move(body);
  req.prepare_payload();
  http::response<http::string_body> res;
  beast::flat_buffer buffer;

  if (!w.tls) {
    beast::tcp_stream stream(ex);
    stream.expires_after(w.timeout);
    co_await stream.async_connect(endpoints, use_awaitable);
    co_await http::async_write(stream, req, use_awaitable);
    co_await http::async_read(stream, buffer, res, use_awaitable);
    beast::error_code ignored;
    stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  } else {
    beast::ssl_stream<beast::tcp_stream> stream(ex, *w.ssl);
    // SNI, and the name the certificate must carry.
    if (!SSL_set_tlsext_host_name(stream.native_handle(), w.host.c_str())) {
      throw std::runtime_error("cannot set the TLS server name");
    }
    stream.set_verify_callback(asio::ssl::host_name_verification(w.host));
    beast::get_lowest_layer(stream).expires_after(w.timeout);
    co_await beast::get_lowest_layer(stream).async_connect(endpoints, use_awaitable);
    co_await stream.async_handshake(asio::ssl::stream_base::client, use_awaitable);
    co_await http::async_write(stream, req, use_awaitable);
    co_await http::async_read(stream, buffer, res, use_awaitable);
    beast::error_code ignored;
    beast::get_lowest_layer(stream).socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  }
  if (res.result_int() < 200 || res.result_int() >= 300) {
    throw std::runtime_error("the receiver answered " + std::to_string(res.result_int()));
  }
}

}  // namespace dlq::ops
