// The leader's advisory lock on raw libpq (SOCI's session cannot be watched between statements).
#include "store/pg_leader.hpp"

#include <algorithm>

#include <libpq-fe.h>

#include "model/logging.hpp"
#include "store/pg_listener.hpp"

namespace dlq::store {
namespace {

// One statement whose single value is returned as text; nullopt when it failed.
std::optional<std::string> query_value(PGconn* conn, const std::string& sql) {
  PGresult* res = PQexec(conn, sql.c_str());
  std::optional<std::string> out;
  if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1) {
    out = PQgetvalue(res, 0, 0);
  } else if (PQresultStatus(res) == PGRES_COMMAND_OK) {
    out = "";
  }
  PQclear(res);
  return out;
}

}  // namespace

PgLeader::PgLeader(std::string conninfo, std::string node, TimeMs takeover_ms,
                   LeadershipCallback callback)
    : takeover_ms_(std::max<TimeMs>(takeover_ms, 1000)), callback_(std::move(callback)) {
  const TimeMs beat = takeover_ms_ / 5;
  const long long idle_s = std::max<long long>(1, beat / 1000);
  // The client gives up on unacknowledged data after half the bound; keepalives find a silent
  // server on the same scale. application_name lets operators (and tests) find the connection.
  conninfo_ = std::move(conninfo) + " application_name=dlqd-leader-" + node +
              " keepalives=1 keepalives_idle=" + std::to_string(idle_s) +
              " keepalives_interval=1 keepalives_count=2 tcp_user_timeout=" +
              std::to_string(takeover_ms_ / 2) +
              " connect_timeout=" + std::to_string(std::max<long long>(2, takeover_ms_ / 1000));
  thread_.start([this] { loop(); });
}

PgLeader::~PgLeader() { stop(); }

void PgLeader::stop() { thread_.stop(); }

void PgLeader::loop() {
  const int beat_ms = static_cast<int>(takeover_ms_ / 5);
  const std::string server_keepalives =
      "SET tcp_keepalives_idle = " + std::to_string(std::max(1, beat_ms / 1000)) +
      "; SET tcp_keepalives_interval = 1; SET tcp_keepalives_count = 2";
  const std::string try_lock = "SELECT pg_try_advisory_lock(" + std::to_string(kLeaderLockKey) + ")";
  while (!thread_.stopping()) {
    PGconn* conn = PQconnectdb(conninfo_.c_str());
    PQsetNoticeProcessor(conn, log_pg_notice, const_cast<char*>("leader campaign"));
    bool leading = false;
    if (PQstatus(conn) == CONNECTION_OK && query_value(conn, server_keepalives)) {
      while (!thread_.stopping() && PQstatus(conn) == CONNECTION_OK) {
        if (!leading) {
          auto got = query_value(conn, try_lock);
          if (!got) break;
          if (*got == "t") {
            leading = true;
            log::info("this node leads the database");
            callback_(true);
          }
        } else if (!query_value(conn, "SELECT 1")) {
          break;
        }
        // Between beats, watch the socket: a terminated session or a closed connection shows
        // up here at once.
        auto woke = thread_.wait(PQsocket(conn), beat_ms);
        if (woke == PgThread::Woke::readable && !PQconsumeInput(conn)) break;
      }
    } else if (!thread_.stopping()) {
      log::warn("leader campaign cannot connect; retrying",
                {{"error", PQerrorMessage(conn)}});
    }
    PQfinish(conn);  // ends the session: the lock, if held, is free for another node now
    if (leading && !thread_.stopping()) {
      log::warn("this node lost the leader lock connection; leader-only tasks stop");
      callback_(false);
    }
    if (thread_.wait(-1, beat_ms) == PgThread::Woke::stopping) break;
  }
}

}  // namespace dlq::store
