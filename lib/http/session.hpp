// One HTTP/1.1 connection: reads requests with limits and timeouts, hands each to the Api, writes
// the answer. The only code that touches a socket. Beast lives in session.cpp only.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "config/config.hpp"
#include "http/api.hpp"

namespace dlq::http {

// What every connection shares: the API, limits, the shutdown flag and the counters the
// shutdown sequence waits on, and a way to close every open connection at the end.
class ServerState {
 public:
  ServerState(Api& api, const Config& config, std::atomic<bool>& shutting_down)
      : api(api), config(config), shutting_down(shutting_down) {}

  Api& api;
  const Config& config;
  std::atomic<bool>& shutting_down;
  std::atomic<std::size_t> requests_in_flight{0};
  std::atomic<std::size_t> connections{0};

  // Sessions register a closer that ends them from any thread.
  std::uint64_t add_closer(std::function<void()> close);
  void remove_closer(std::uint64_t id);
  void close_all();

 private:
  std::mutex mu_;
  std::uint64_t next_id_ = 0;
  std::unordered_map<std::uint64_t, std::function<void()>> closers_;
};

// The caller has counted the connection in state.connections; the session uncounts it at its end.
boost::asio::awaitable<void> run_session(boost::asio::ip::tcp::socket socket, ServerState& state);

}  // namespace dlq::http
