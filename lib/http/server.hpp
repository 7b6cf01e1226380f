// The listening side of dlqd: binds, accepts (refusing connections over the limit), runs one
// session coroutine per connection on one of the pool's I/O threads (round-robin), and takes
// part in the phased shutdown.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "http/api.hpp"
#include "http/io_pool.hpp"

namespace dlq::http {

class Server {
 public:
  // `shutting_down` is shared with the Api: once set, new requests are answered 503.
  Server(IoPool& pool, Api& api, const Config& config,
         std::atomic<bool>& shutting_down);
  ~Server();

  // Binds `host_port` (port 0 picks a free port). Returns the address actually bound, as
  // "HOST:PORT" ("[::1]:PORT" for IPv6). Throws when it cannot bind.
  std::string listen(const std::string& host_port);
  bool bound_to_loopback() const;
  void start();
  // Stops accepting; requests arriving from now on are answered 503 shutting-down.
  void stop_accepting();
  std::size_t requests_in_flight() const;
  std::size_t connections() const;
  // Ends every open connection (idle keep-alive ones included).
  void close_connections();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dlq::http
