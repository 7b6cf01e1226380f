// Leadership of a PostgreSQL database: a session-level advisory lock held on a dedicated libpq
// connection, on a thread of its own (like the change listener). Followers retry the lock on
// every beat (takeover / 5); the leader checks its connection on the same beat and reports the
// loss as soon as a check fails or the socket closes. TCP keepalives on both ends and the
// client's tcp_user_timeout bound how long a silently vanished peer keeps the lock.
#pragma once

#include <string>

#include "model/time.hpp"
#include "store/pg_thread.hpp"
#include "store/store.hpp"

namespace dlq::store {

// The advisory lock key (the migrations hold 7274001 while they run).
inline constexpr long long kLeaderLockKey = 7274002;

class PgLeader {
 public:
  PgLeader(std::string conninfo, std::string node, TimeMs takeover_ms,
           LeadershipCallback callback);
  ~PgLeader();
  PgLeader(const PgLeader&) = delete;
  PgLeader& operator=(const PgLeader&) = delete;
  // Ends the campaign; closing the connection frees the lock for another node at once.
  void stop();

 private:
  void loop();

  std::string conninfo_;
  TimeMs takeover_ms_;
  LeadershipCallback callback_;
  PgThread thread_;  // last: stopped before the members its loop uses go
};

}  // namespace dlq::store
