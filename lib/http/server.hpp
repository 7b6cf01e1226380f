// The listening side of dlqd: binds, accepts (refusing connections over the limit), runs one
// session coroutine per connection on one of the pool's I/O threads (round-robin), and takes
// part in the phased shutdown.
#pragma once

#include <memory>
#include <string>

#include "config/config.hpp"
#include "http/api.hpp"
#include "http/io_pool.hpp"
#include "http/lifecycle.hpp"

namespace dlq::http {

class Server {
 public:
  // Counts its connections and requests in `lifecycle`, and answers 503 once it shuts down.
  Server(IoPool& pool, Api& api, const Config& config, Lifecycle& lifecycle);
  ~Server();

  // Binds `host_port` (port 0 picks a free port). Returns the address actually bound, as
  // "HOST:PORT" ("[::1]:PORT" for IPv6). Throws when it cannot bind.
  std::string listen(const std::string& host_port);
  bool bound_to_loopback() const;
  void start();
  // Closes the listening socket (the lifecycle's begin_shutdown() makes the 503 answers).
  void stop_accepting();
  // Ends every open connection (idle keep-alive ones included).
  void close_connections();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dlq::http
