// One database connection: a SOCI session opened on SQLite or PostgreSQL with the settings dlq
// relies on (WAL and synchronous=FULL on SQLite), transaction control, and the classification
// of database errors into dlq's fault types. Used by exactly one store thread at a time.
#pragma once

#include <memory>
#include <string>

#include <soci/soci.h>

#include "config/database_url.hpp"
#include "store/dialect.hpp"

namespace dlq::store {

struct ConnectionOptions {
  DatabaseTarget target;
  std::string sqlite_synchronous = "full";
};

class Connection {
 public:
  explicit Connection(ConnectionOptions options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  soci::session& session() { return session_; }
  const Dialect& dialect() const { return *dialect_; }
  bool is_sqlite() const { return dialect_->kind == Dialect::Kind::sqlite; }

  void begin_write();
  void commit();
  void rollback() noexcept;
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

 private:
  ConnectionOptions options_;
  const Dialect* dialect_;
  soci::session session_;
};

// A unique constraint refused the statement (the idempotency index, on either database).
bool is_unique_violation(const soci::soci_error& e);

// Rethrows the current database exception as dlq's own type: DatabaseUnavailable when the
// database cannot serve (connection lost, locked, disk full), else std::runtime_error.
[[noreturn]] void rethrow_database_error(const std::string& context);

}  // namespace dlq::store
