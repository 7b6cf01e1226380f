// One database connection: a SOCI session opened on SQLite or PostgreSQL with the settings dlq
// relies on (WAL and synchronous=FULL on SQLite), transaction control, and the classification
// of database errors into dlq's fault types. Used by exactly one store thread at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <soci/soci.h>

#include "config/database_url.hpp"
#include "store/dialect.hpp"
#include "store/fault_vfs.hpp"

namespace dlq::store {

struct ConnectionOptions {
  DatabaseTarget target;
  std::string sqlite_synchronous = "full";
  long long statement_timeout_ms = 30000;  // PostgreSQL
  long long sqlite_max_page_count = 0;     // SQLite; 0: no limit
  SqliteFaults sqlite_faults;              // testing.faults (the first connection installs them)
  // PostgreSQL: cuts off a job that holds the connection past its bound (statement_watch.hpp).
  std::shared_ptr<class StatementWatch> watch;
};

// SQLite: logs a warning when the database file's mode lets anyone but its owner read or write
// it (a file dlqd creates is 0600; one made by hand or by an older dlqd may not be).
void warn_if_database_shared(const std::string& sqlite_path);

class Connection {
 public:
  explicit Connection(ConnectionOptions options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  soci::session& session() { return session_; }
  // The SQLite file ("" on PostgreSQL), for the errors that name it.
  const std::string& sqlite_path() const { return options_.target.sqlite_path; }
  const Dialect& dialect() const { return *dialect_; }
  bool is_sqlite() const { return dialect_->kind == Dialect::Kind::sqlite; }

  void begin_write();
  // COMMIT, preceded by what commit_with asked for, in one round trip (one simple query).
  void commit();
  void rollback() noexcept;  // also forgets what commit_with asked for
  // A statement that returns nothing and must be part of the open transaction (PostgreSQL's
  // NOTIFY) goes to the server with its COMMIT: one round trip per group instead of two. If it
  // fails, the transaction is rolled back and commit() throws.
  void commit_with(const std::string& sql) { commit_prefix_ += sql + "; "; }
  // Runs statements that need no results (migrations, pragmas).
  void execute(const std::string& sql);

  // Ends a prepared statement's run so it holds no cursor: an un-reset SQLite statement keeps
  // its connection's read snapshot (later reads would not see new commits) and blocks COMMIT.
  void finish(soci::statement& st);

  // SQLite only: the rowid of the last INSERT and the rows the last statement changed. Reading
  // them directly spares an INSERT its RETURNING clause, which makes SQLite build a temporary
  // table per execution (it more than doubled the cost of an enqueue).
  long long last_insert_rowid();
  long long changes();

  // True when the session is no longer usable (PostgreSQL connection lost); the owner then
  // replaces the connection.
  bool broken() const;

  // The statement watch's view: the owner marks the connection busy while a job runs on it;
  // the watch thread may interrupt() it, which shuts its socket down (PostgreSQL; once per busy
  // spell). Returns whether it did.
  void mark_busy();
  void mark_idle();
  std::optional<std::chrono::steady_clock::time_point> busy_since() const;
  bool interrupt();

 private:
  ConnectionOptions options_;
  const Dialect* dialect_;
  soci::session session_;
  std::atomic<std::chrono::steady_clock::rep> busy_since_{0};  // 0: idle
  std::atomic<bool> interrupted_{false};
  std::string commit_prefix_;  // commit_with's statements, each followed by "; "
};

// A unique constraint refused the statement (the idempotency index, on either database).
bool is_unique_violation(const soci::soci_error& e);

// Rethrows the current database exception as dlq's own type: DatabaseUnavailable when the
// database cannot serve (connection lost, locked, disk full), else std::runtime_error. On SQLite
// the error names `sqlite_path`, as does any other error but dlq's own fault types: a damaged
// file ("database disk image is malformed") is the one the operator restores.
[[noreturn]] void rethrow_database_error(const std::string& context,
                                         const std::string& sqlite_path = "");

}  // namespace dlq::store
