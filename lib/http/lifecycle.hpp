// The server's life as its connections and requests see it: serving, then shutting down. It
// counts the requests in flight and the open connections, and the shutdown sequence waits on it:
// the last request (or connection) to end wakes the wait at once, the grace bounds it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

namespace dlq::http {

class Lifecycle {
 public:
  // `executor`: where the shutdown sequence waits. It must be run by one thread (dlqd's main
  // context): a wake-up posted there cannot overtake the wait it is meant to end.
  explicit Lifecycle(boost::asio::any_io_executor executor);
  Lifecycle(const Lifecycle&) = delete;
  Lifecycle& operator=(const Lifecycle&) = delete;

  // Once begun: requests are answered 503 shutting-down, every answer closes its connection.
  bool shutting_down() const { return shutting_down_.load(); }
  void begin_shutdown() { shutting_down_ = true; }

  // Any thread.
  void request_started() { ++requests_; }
  void request_ended() { ended(requests_); }
  void connection_opened() { ++connections_; }
  void connection_closed() { ended(connections_); }
  std::size_t requests_in_flight() const { return requests_.load(); }
  std::size_t connections() const { return connections_.load(); }

  // On the executor, after begin_shutdown(): until no request is in flight (no connection is
  // open), or `grace` passed. True when none is left.
  using Grace = std::chrono::steady_clock::duration;
  boost::asio::awaitable<bool> requests_drained(Grace grace);
  boost::asio::awaitable<bool> connections_closed(Grace grace);

 private:
  void ended(std::atomic<std::size_t>& count);
  boost::asio::awaitable<bool> until_none(const std::atomic<std::size_t>& count, Grace grace);

  boost::asio::any_io_executor executor_;
  boost::asio::steady_timer wake_;  // the shutdown's wait; cancelled when a count reaches zero
  std::atomic<bool> shutting_down_{false};
  std::atomic<std::size_t> requests_{0};
  std::atomic<std::size_t> connections_{0};
};

}  // namespace dlq::http
