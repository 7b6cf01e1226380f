#include "store/pg_listener.hpp"

#include <poll.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "model/logging.hpp"

namespace dlq::store {

std::string encode_change(const std::string& queue, TimeMs due) {
  return std::to_string(due) + ":" + queue;
}

bool decode_change(const std::string& payload, std::string& queue, TimeMs& due) {
  auto colon = payload.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  try {
    due = std::stoll(payload.substr(0, colon));
  } catch (const std::exception&) {
    return false;
  }
  queue = payload.substr(colon + 1);
  return !queue.empty();
}

PgListener::PgListener(std::string conninfo, ChangeCallback callback)
    : conninfo_(std::move(conninfo)), callback_(std::move(callback)) {
  if (pipe(wake_) != 0) throw std::runtime_error("pipe failed");
  thread_ = std::thread([this] { loop(); });
}

PgListener::~PgListener() { stop(); }

void PgListener::stop() {
  if (stopping_.exchange(true)) return;
  char byte = 1;
  [[maybe_unused]] auto written = write(wake_[1], &byte, 1);
  if (thread_.joinable()) thread_.join();
  close(wake_[0]);
  close(wake_[1]);
}

void PgListener::loop() {
  bool had_connection = false;
  while (!stopping_) {
    PGconn* conn = PQconnectdb(conninfo_.c_str());
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
      while (!stopping_ && PQstatus(conn) == CONNECTION_OK) {
        pollfd fds[2] = {{PQsocket(conn), POLLIN, 0}, {wake_[0], POLLIN, 0}};
        int n = poll(fds, 2, 5000);
        if (n < 0) continue;
        if (fds[1].revents) break;
        if (!PQconsumeInput(conn)) break;  // the connection is gone
        while (PGnotify* note = PQnotifies(conn)) {
          std::string queue;
          TimeMs due = 0;
          if (decode_change(note->extra, queue, due)) callback_(queue, due);
          PQfreemem(note);
        }
      }
      if (!stopping_) log::warn("change listener lost its connection; reconnecting");
    }
    PQfinish(conn);
    if (stopping_) break;
    // Wait a moment before reconnecting (interruptible by stop()).
    pollfd wake{wake_[0], POLLIN, 0};
    poll(&wake, 1, 1000);
  }
}

}  // namespace dlq::store
