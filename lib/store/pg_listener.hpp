// Cross-node wake-ups on PostgreSQL: every node NOTIFYs, in the committing transaction, the queues
// whose messages became due (or due sooner); this listener LISTENs on its own libpq connection —
// SOCI 4.0.3 has no LISTEN/NOTIFY API — on a thread of its own, and reconnects when it drops.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "model/time.hpp"
#include "store/pg_thread.hpp"
#include "store/store.hpp"

namespace dlq::store {

// The channel and the payload both ends agree on: "<node>:<due ms, 0 for now>:<queue>". The
// node id lets a listener skip its own node's changes (it has announced them locally already;
// waking twice would wake two claimers for one message).
inline constexpr const char* kNotifyChannel = "dlq_changes";
std::string encode_change(const std::string& node, const std::string& queue, TimeMs due);
bool decode_change(const std::string& payload, std::string& node, std::string& queue, TimeMs& due);

// libpq notice processor for the dedicated connections (listener, leader): what the server says
// outside a query ("terminating connection due to administrator command") goes to the log, not
// to stderr. `connection_name` is a C string naming the connection.
void log_pg_notice(void* connection_name, const char* message);

class PgListener {
 public:
  PgListener(std::string conninfo, std::string own_node, ChangeCallback callback);
  ~PgListener();
  PgListener(const PgListener&) = delete;
  PgListener& operator=(const PgListener&) = delete;
  void stop();

 private:
  void loop();

  std::string conninfo_;
  std::string own_node_;
  ChangeCallback callback_;
  PgThread thread_;  // last: stopped before the members its loop uses go
};

}  // namespace dlq::store
