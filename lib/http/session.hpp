// One HTTP/1.1 connection: reads requests with limits and timeouts, hands each to the Api, writes
// the answer. The only code that touches a socket. Beast lives in session.cpp only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "config/config.hpp"
#include "http/api.hpp"
#include "http/lifecycle.hpp"

namespace dlq::http {

// What every connection shares: the API, limits, the lifecycle (shutting down? what is still in
// flight?), and a way to close every open connection at the end.
class ServerState {
 public:
  ServerState(Api& api, const Config& config, Lifecycle& lifecycle)
      : api(api), config(config), lifecycle(lifecycle) {}

  Api& api;
  const Config& config;
  Lifecycle& lifecycle;

  // Sessions register a closer that ends them from any thread.
  std::uint64_t add_closer(std::function<void()> close);
  void remove_closer(std::uint64_t id);
  void close_all();

 private:
  std::mutex mu_;
  std::uint64_t next_id_ = 0;
  std::unordered_map<std::uint64_t, std::function<void()>> closers_;
};

// The caller has counted the connection in the lifecycle; the session uncounts it at its end.
boost::asio::awaitable<void> run_session(boost::asio::ip::tcp::socket socket, ServerState& state);

}  // namespace dlq::http
