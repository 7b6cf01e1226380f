// The LISTEN side of cross-node wake-ups, on raw libpq.
#include "store/pg_listener.hpp"

#include <libpq-fe.h>

#include "model/logging.hpp"

namespace dlq::store {

std::string encode_change(const std::string& node, const std::string& queue, TimeMs due) {
  return node + ":" + std::to_string(due) + ":" + queue;
}

bool decode_change(const std::string& payload, std::string& node, std::string& queue, TimeMs& due) {
  auto first = payload.find(':');
  auto second = first == std::string::npos ? first : payload.find(':', first + 1);
  if (second == std::string::npos || first == 0) return false;
  node = payload.substr(0, first);
  try {
    due = std::stoll(payload.substr(first + 1, second - first - 1));
  } catch (const std::exception&) {
    return false;
  }
  queue = payload.substr(second + 1);
  return !queue.empty();
}

void log_pg_notice(void* connection_name, const char* message) {
  std::string text(message);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  log::warn("postgresql says", {{"connection", static_cast<const char*>(connection_name)},
                                {"message", text}});
}

PgListener::PgListener(std::string conninfo, std::string own_node, ChangeCallback callback)
    : conninfo_(std::move(conninfo)), own_node_(std::move(own_node)), callback_(std::move(callback)) {
  thread_.start([this] { loop(); });
}

PgListener::~PgListener() { stop(); }

void PgListener::stop() { thread_.stop(); }

void PgListener::loop() {
  bool had_connection = false;
  while (!thread_.stopping()) {
    PGconn* conn = PQconnectdb(conninfo_.c_str());
    PQsetNoticeProcessor(conn, log_pg_notice, const_cast<char*>("change listener"));
    bool ok = PQstatus(conn) == CONNECTION_OK;
    if (ok) {
      PGresult* res = PQexec(conn, (std::string("LISTEN ") + kNotifyChannel).c_str());
      ok = PQresultStatus(res) == PGRES_COMMAND_OK;
      PQclear(res);
    }
    if (ok) {
      if (had_connection) {
        log::info("change listener reconnected");
        callback_("", 0);  // whatever happened while we were away: look again
      }
      had_connection = true;
      while (!thread_.stopping() && PQstatus(conn) == CONNECTION_OK) {
        if (thread_.wait(PQsocket(conn), 5000) == PgThread::Woke::stopping) break;
        if (!PQconsumeInput(conn)) break;  // the connection is gone
        while (PGnotify* note = PQnotifies(conn)) {
          std::string node, queue;
          TimeMs due = 0;
          if (decode_change(note->extra, node, queue, due) && node != own_node_) callback_(queue, due);
          PQfreemem(note);
        }
      }
      if (!thread_.stopping()) log::warn("change listener lost its connection; reconnecting");
    }
    PQfinish(conn);
    if (thread_.stopping()) break;
    // Wait a moment before reconnecting (interruptible by stop()).
    thread_.wait(-1, 1000);
  }
}

}  // namespace dlq::store
