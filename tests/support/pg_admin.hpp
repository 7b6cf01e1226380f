// The test side of PostgreSQL: which backend a suite runs on (DLQ_TEST_BACKEND) and fresh,
// isolated databases on the throwaway server scripts/test.sh starts (DLQ_TEST_PG_URL). A test
// that needs PostgreSQL and cannot reach it throws: it fails, it never passes quietly.
#pragma once

#include <string>

namespace dlq::test {

enum class Backend { sqlite, postgresql };
Backend test_backend();

// postgresql://user@host:port/postgres — from DLQ_TEST_PG_URL; throws when unset.
std::string pg_admin_url();
// Creates an empty database with a unique name; returns its URL.
std::string create_pg_database(const std::string& prefix);
// Runs one SQL command against the admin database (throws on failure).
void pg_admin_exec(const std::string& sql);
// Runs one SQL command against the database at `url` (throws on failure).
void pg_exec(const std::string& url, const std::string& sql);

// A connection the test keeps open (to hold a lock, say) and asks one-value questions on.
class PgSession {
 public:
  explicit PgSession(const std::string& url);
  ~PgSession();
  PgSession(const PgSession&) = delete;
  PgSession& operator=(const PgSession&) = delete;
  // The first column of the first row as text ("" when the statement returns no rows); throws
  // when the statement fails.
  std::string query(const std::string& sql);

 private:
  void* conn_;  // PGconn, kept out of this header
};

}  // namespace dlq::test
