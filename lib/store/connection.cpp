// Opening (a SQLite file and its folders private to their owner) and configuring connections,
// transaction control, and classifying database errors into dlq's fault types
// (DatabaseUnavailable is answered 503, the rest 500).
#include "store/connection.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <soci/postgresql/soci-postgresql.h>
#include <soci/sqlite3/soci-sqlite3.h>

#include "model/error.hpp"
#include "model/logging.hpp"
#include "store/statement_watch.hpp"
#include "store/fault_vfs.hpp"
#include "store/wal_writes.hpp"

namespace dlq::store {
namespace {

// What dlqd creates for a SQLite database is its owner's alone, whatever the umask: folders
// 0700, the file 0600 (it holds every payload). SQLite creates the -wal and -shm files with the
// database file's mode, so they follow. What exists already is left as it is.
void create_private_folders(const std::filesystem::path& folder) {
  std::filesystem::path prefix;
  for (const auto& part : folder) {
    prefix /= part;
    if (::mkdir(prefix.c_str(), 0700) == 0) {
      ::chmod(prefix.c_str(), 0700);  // the umask may have taken bits from mkdir's mode
    } else if (errno != EEXIST) {
      throw DatabaseUnavailable("creating the database folder " + prefix.string() + ": " +
                                std::strerror(errno));
    }
  }
}

void create_private_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return;  // it exists (or cannot be made: SQLite's open says why)
  ::fchmod(fd, 0600);
  ::close(fd);
}

soci::session open_session(const ConnectionOptions& o) {
  if (o.target.backend == DatabaseTarget::Backend::sqlite) {
    // Each connection is used by one thread at a time (its store thread), so SQLite's own
    // per-call mutexes are pure cost ("multi-thread" mode), as is its memory accounting (a
    // mutex per allocation). Takes effect only before SQLite's first use in the process;
    // later SQLite refuses, harmlessly.
    static const bool configured = [&o] {
      sqlite_api::sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
      sqlite_api::sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
      install_sqlite_faults(o.sqlite_faults);  // under the gathering, where a disk's faults land
      install_wal_write_gathering();  // after the configuration: it initializes SQLite
      return true;
    }();
    (void)configured;
    std::filesystem::path path(o.target.sqlite_path);
    if (path.has_parent_path()) create_private_folders(path.parent_path());
    create_private_file(o.target.sqlite_path);
    // timeout: how long a statement waits for a lock held by another connection (seconds).
    return soci::session(soci::sqlite3, "db=\"" + o.target.sqlite_path + "\" timeout=10");
  }
  return soci::session(soci::postgresql, o.target.libpq_conninfo);
}

}  // namespace

void warn_if_database_shared(const std::string& sqlite_path) {
  struct stat st {};
  if (::stat(sqlite_path.c_str(), &st) != 0 || (st.st_mode & 077) == 0) return;
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  log::warn("the database file is open to other users than its owner; chmod 600 it (and its "
            "-wal and -shm files)",
            {{"path", sqlite_path}, {"mode", mode}});
}

Connection::Connection(ConnectionOptions options)
    : options_(std::move(options)),
      dialect_(options_.target.backend == DatabaseTarget::Backend::sqlite ? &sqlite_dialect()
                                                                          : &postgres_dialect()),
      session_([this]() {
        try {
          return open_session(options_);
        } catch (const soci::soci_error& e) {
          // Whatever the driver says, a database we cannot connect to is unavailable.
          throw DatabaseUnavailable(std::string("connecting to the database: ") + e.what());
        }
      }()) {
  try {
    if (is_sqlite()) {
      std::string mode;
      session_ << "PRAGMA journal_mode=WAL", soci::into(mode);
      if (mode != "wal") throw std::runtime_error("SQLite refused WAL mode (got " + mode + ")");
      execute("PRAGMA synchronous=" + std::string(options_.sqlite_synchronous == "normal"
                                                      ? "NORMAL" : "FULL"));
      execute("PRAGMA foreign_keys=OFF");
      execute("PRAGMA temp_store=MEMORY");
      if (options_.sqlite_max_page_count > 0) {
        execute("PRAGMA max_page_count=" + std::to_string(options_.sqlite_max_page_count));
      }
    } else {
      // Server notices ("relation already exists, skipping") go to the log, not to stderr.
      auto* backend = static_cast<soci::postgresql_session_backend*>(session_.get_backend());
      PQsetNoticeProcessor(
          backend->conn_,
          [](void*, const char* message) {
            std::string text(message);
            while (!text.empty() && text.back() == '\n') text.pop_back();
            log::debug("postgresql notice", {{"message", text}});
          },
          nullptr);
      execute("SET statement_timeout = " + std::to_string(options_.statement_timeout_ms));
      execute("SET lock_timeout = '10s'");
      // An idle-in-transaction session would hold snapshots that slow every claim.
      execute("SET idle_in_transaction_session_timeout = '60s'");
    }
  } catch (const soci::soci_error&) {
    rethrow_database_error("configuring the database connection", sqlite_path());
  }
  if (options_.watch && !is_sqlite()) options_.watch->add(this);
}

Connection::~Connection() {
  if (options_.watch) options_.watch->remove(this);
}

void Connection::mark_busy() {
  interrupted_ = false;
  auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  busy_since_ = now == 0 ? 1 : now;
}

void Connection::mark_idle() { busy_since_ = 0; }

std::optional<std::chrono::steady_clock::time_point> Connection::busy_since() const {
  auto since = busy_since_.load();
  if (since == 0) return std::nullopt;
  return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(since));
}

bool Connection::interrupt() {
  if (is_sqlite() || interrupted_.exchange(true)) return false;
  auto* backend = static_cast<soci::postgresql_session_backend*>(session_.get_backend());
  int fd = backend->conn_ != nullptr ? PQsocket(backend->conn_) : -1;
  return fd >= 0 && ::shutdown(fd, SHUT_RDWR) == 0;
}

void Connection::begin_write() { execute(dialect_->begin_write); }

void Connection::commit() {
  if (commit_prefix_.empty()) {
    execute("COMMIT");
    return;
  }
  std::string sql = std::move(commit_prefix_) + "COMMIT";
  commit_prefix_.clear();
  try {
    execute(sql);  // no parameters: one simple query, which may hold several statements
  } catch (...) {
    // A failed statement before the COMMIT leaves the transaction open and aborted (the server
    // skips the rest of the query): end it, so the connection's next BEGIN starts afresh.
    rollback();
    throw;
  }
}

void Connection::rollback() noexcept {
  commit_prefix_.clear();
  try {
    session_ << "ROLLBACK";
  } catch (...) {
    // A failed rollback leaves nothing to undo (the transaction is gone with the connection).
  }
}

void Connection::execute(const std::string& sql) { session_ << sql; }

void Connection::finish(soci::statement& st) {
  if (!is_sqlite()) return;  // libpq results are complete in memory
  auto* backend = static_cast<soci::sqlite3_statement_backend*>(st.get_backend());
  if (backend != nullptr && backend->stmt_ != nullptr) sqlite_api::sqlite3_reset(backend->stmt_);
}

namespace {

sqlite_api::sqlite3* sqlite_handle(soci::session& session) {
  return static_cast<soci::sqlite3_session_backend*>(session.get_backend())->conn_;
}

}  // namespace

long long Connection::last_insert_rowid() {
  return sqlite_api::sqlite3_last_insert_rowid(sqlite_handle(session_));
}

long long Connection::changes() { return sqlite_api::sqlite3_changes(sqlite_handle(session_)); }

bool Connection::broken() const {
  if (is_sqlite()) return false;
  auto* backend = static_cast<soci::postgresql_session_backend*>(
      const_cast<soci::session&>(session_).get_backend());
  return backend == nullptr || backend->conn_ == nullptr || PQstatus(backend->conn_) != CONNECTION_OK;
}

bool is_unique_violation(const soci::soci_error& e) {
  if (const auto* pg = dynamic_cast<const soci::postgresql_soci_error*>(&e)) {
    return pg->sqlstate() == "23505";
  }
  if (const auto* lite = dynamic_cast<const soci::sqlite3_soci_error*>(&e)) {
    return (lite->result() & 0xff) == SQLITE_CONSTRAINT;
  }
  return false;
}

void rethrow_database_error(const std::string& context, const std::string& sqlite_path) {
  try {
    throw;
  } catch (const soci::sqlite3_soci_error& e) {
    const std::string what =
        (sqlite_path.empty() ? context : context + " (" + sqlite_path + ")") + ": " + e.what();
    switch (e.result() & 0xff) {
      case SQLITE_FULL:
        throw StorageFull(what);
      case SQLITE_BUSY:
      case SQLITE_LOCKED:
      case SQLITE_IOERR:
      case SQLITE_CANTOPEN:
      case SQLITE_READONLY:
      case SQLITE_NOMEM:
        throw DatabaseUnavailable(what);
      default:
        throw std::runtime_error(what);
    }
  } catch (const soci::postgresql_soci_error& e) {
    std::string state = e.sqlstate();
    if (state == "53100") throw StorageFull(context + ": " + e.what());  // disk_full
    // 08: connection exception; 57P: operator intervention (shutdown); 53: insufficient
    // resources; 40001/40P01: serialization failure/deadlock; 55P03: lock not available;
    // 57014: statement_timeout (database.statement_timeout_seconds) cancelled the statement.
    // No SQLSTATE at all: libpq lost the server before it could answer.
    if (state.empty() || state.starts_with("08") || state.starts_with("57P") || state.starts_with("53") ||
        state == "40001" || state == "40P01" || state == "55P03" || state == "57014" ||
        e.get_error_category() == soci::soci_error::connection_error) {
      throw DatabaseUnavailable(context + ": " + e.what());
    }
    throw std::runtime_error(context + ": " + e.what());
  } catch (const soci::soci_error& e) {
    if (e.get_error_category() == soci::soci_error::connection_error) {
      throw DatabaseUnavailable(context + ": " + e.what());
    }
    throw std::runtime_error(context + ": " + e.what());
  } catch (const DatabaseUnavailable&) {
    throw;
  } catch (const StorageFull&) {
    throw;
  } catch (const ShuttingDown&) {
    throw;
  } catch (const std::exception& e) {
    // What SQLite read but dlqd cannot (a status no version writes: a damaged byte) names the
    // file as well.
    if (sqlite_path.empty()) throw;
    throw std::runtime_error(context + " (" + sqlite_path + "): " + e.what());
  }
}

}  // namespace dlq::store
