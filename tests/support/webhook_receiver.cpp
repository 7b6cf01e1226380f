// The alert tests' receiver: one thread, one connection at a time, Beast over Asio (and OpenSSL).
#include "support/webhook_receiver.hpp"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace dlq::test {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

TestCertificates::TestCertificates(const std::string& dir) {
  ca_file = dir + "/ca.pem";
  cert_file = dir + "/server.pem";
  key_file = dir + "/server.key";
  std::ofstream(dir + "/san.ext") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
  std::string q = " 2>/dev/null";
  std::string commands =
      "openssl req -x509 -newkey rsa:2048 -nodes -keyout " + dir + "/ca.key -out " + ca_file +
      " -days 2 -subj /CN=dlq-test-ca" + q + " && openssl req -newkey rsa:2048 -nodes -keyout " +
      key_file + " -out " + dir + "/server.csr -subj /CN=localhost" + q +
      " && openssl x509 -req -in " + dir + "/server.csr -CA " + ca_file + " -CAkey " + dir +
      "/ca.key -CAcreateserial -out " + cert_file + " -days 2 -extfile " + dir + "/san.ext" + q;
  if (std::system(commands.c_str()) != 0) throw std::runtime_error("openssl could not make test certificates");
}

struct WebhookReceiver::Impl {
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::unique_ptr<asio::ssl::context> ssl;
  std::mutex mu;
  std::vector<Received> received;
  std::atomic<bool> stopping{false};
  std::thread thread;
};

WebhookReceiver::WebhookReceiver(const TestCertificates* tls) : impl_(std::make_unique<Impl>()) {
  auto& a = impl_->acceptor;
  tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
  a.open(ep.protocol());
  a.set_option(tcp::acceptor::reuse_address(true));
  a.bind(ep);
  a.listen();
  port_ = a.local_endpoint().port();
  if (tls) {
    impl_->ssl = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    impl_->ssl->use_certificate_chain_file(tls->cert_file);
    impl_->ssl->use_private_key_file(tls->key_file, asio::ssl::context::pem);
  }
  impl_->thread = std::thread([this] {
    auto& im = *impl_;
    while (!im.stopping) {
      tcp::socket socket(im.ioc);
      boost::system::error_code ec;
      im.acceptor.accept(socket, ec);
      if (ec || im.stopping) break;
      auto serve = [&](auto& stream) {
        beast::flat_buffer buffer;
        http::request<http::string_body> req;
        http::read(stream, buffer, req, ec);
        if (ec) return;
        ++attempts;
        int status = 200;
        if (fail_next > 0) {
          --fail_next;
          status = 500;
        } else {
          std::lock_guard lock(im.mu);
          im.received.push_back({req.body(), std::chrono::steady_clock::now()});
        }
        http::response<http::string_body> res{static_cast<http::status>(status), 11};
        res.body() = status == 200 ? "ok" : "down";
        res.prepare_payload();
        http::write(stream, res, ec);
      };
      if (im.ssl) {
        beast::ssl_stream<tcp::socket> stream(std::move(socket), *im.ssl);
        stream.handshake(asio::ssl::stream_base::server, ec);
        if (!ec) serve(stream);
      } else {
        serve(socket);
      }
    }
  });
}

WebhookReceiver::~WebhookReceiver() {
  impl_->stopping = true;
  // Wake the blocking accept with a connection of our own.
  boost::system::error_code ec;
  tcp::socket poke(impl_->ioc);
  poke.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::vector<WebhookReceiver::Received> WebhookReceiver::received() {
  std::lock_guard lock(impl_->mu);
  return impl_->received;
}

}  // namespace dlq::test
