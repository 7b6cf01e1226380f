// The acceptor loop and the connection limit.
#include "http/server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "http/session.hpp"
#include "model/logging.hpp"

namespace dlq::http {
namespace asio = boost::asio;
using asio::ip::tcp;
using asio::use_awaitable;

struct Server::Impl {
  Impl(IoPool& pool, Api& api, const Config& config, Lifecycle& lifecycle)
      : pool(pool), config(config), state(api, config, lifecycle), acceptor(pool.main()) {}

  asio::awaitable<void> accept_loop() {
    for (;;) {
      // The connection lives on the I/O thread it is given: one thread per context, so its
      // handlers need no strand.
      auto [ec, socket] = co_await acceptor.async_accept(pool.next(), asio::as_tuple(use_awaitable));
      if (ec) {
        if (ec == asio::error::operation_aborted || !acceptor.is_open()) break;
        // Out of file descriptors and the like: pause instead of spinning.
        log::warn("accept failed", {{"error", ec.message()}});
        asio::steady_timer pause(pool.main(), std::chrono::milliseconds(50));
        co_await pause.async_wait(asio::as_tuple(use_awaitable));
        continue;
      }
      if (state.lifecycle.connections() >= static_cast<std::size_t>(config.limits.max_connections)) {
        log::warn("connection refused: limits.max_connections reached");
        boost::system::error_code ignored;
        socket.close(ignored);
        continue;
      }
      // Counted here, not when the session starts on its thread: the next accept must see it.
      state.lifecycle.connection_opened();
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      auto executor = socket.get_executor();
      asio::co_spawn(executor, run_session(std::move(socket), state), [](std::exception_ptr e) {
        if (!e) return;
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& ex) {
          log::error("connection ended by an error", {{"error", ex.what()}});
        }
      });
    }
  }

  IoPool& pool;
  const Config& config;
  ServerState state;
  tcp::acceptor acceptor;
  tcp::endpoint bound;
};

Server::Server(IoPool& pool, Api& api, const Config& config, Lifecycle& lifecycle)
    : impl_(std::make_unique<Impl>(pool, api, config, lifecycle)) {}

Server::~Server() = default;

std::string Server::listen(const std::string& host_port) {
  auto colon = host_port.rfind(':');
  std::string host = host_port.substr(0, colon);
  std::string port = host_port.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  tcp::resolver resolver(impl_->pool.main());
  auto results = resolver.resolve(host, port, tcp::resolver::numeric_service);
  if (results.empty()) throw std::runtime_error("cannot resolve " + host);
  tcp::endpoint endpoint = results.begin()->endpoint();
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol());
  acceptor.set_option(tcp::acceptor::reuse_address(true));
  acceptor.bind(endpoint);
  acceptor.listen(asio::socket_base::max_listen_connections);
  impl_->bound = acceptor.local_endpoint();
  auto address = impl_->bound.address();
  std::string text = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  return text + ":" + std::to_string(impl_->bound.port());
}

bool Server::bound_to_loopback() const { return impl_->bound.address().is_loopback(); }

void Server::start() {
  asio::co_spawn(impl_->acceptor.get_executor(), impl_->accept_loop(), [](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      log::error("accept loop ended by an error", {{"error", ex.what()}});
    }
  });
}

void Server::stop_accepting() {
  asio::post(impl_->acceptor.get_executor(), [impl = impl_.get()] {
    boost::system::error_code ignored;
    impl->acceptor.close(ignored);
  });
}

void Server::close_connections() { impl_->state.close_all(); }

}  // namespace dlq::http
