// The bound on a database call whose server went silent. A PostgreSQL server behind a network
// that stops forwarding (a failed middlebox, a partition, a proxy) never answers, and libpq would
// wait for it forever: the TCP connection stays "alive" as long as something acknowledges its
// bytes. The server's statement_timeout cannot help (the server never saw the statement), so a
// watchdog thread shuts the socket of a connection down once one job has held it past the bound;
// libpq then fails the call, the connection counts as lost (503) and is replaced on next use.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

namespace dlq::store {

class Connection;

class StatementWatch {
 public:
  explicit StatementWatch(std::chrono::milliseconds bound);
  ~StatementWatch();
  StatementWatch(const StatementWatch&) = delete;
  StatementWatch& operator=(const StatementWatch&) = delete;

  // Connections register for their lifetime: the watch never touches one being destroyed.
  void add(Connection* c);
  void remove(Connection* c);

  std::chrono::milliseconds bound() const { return bound_; }

 private:
  void loop();

  const std::chrono::milliseconds bound_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::set<Connection*> connections_;
  std::thread thread_;
};

}  // namespace dlq::store
