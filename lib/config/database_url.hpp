// The user's database URL (`sqlite:data/dlq.db`, `postgresql://user@host:port/db`) turned into
// what the store opens: a backend and, for PostgreSQL, a libpq keyword/value connect string.
#pragma once

#include <string>

namespace dlq {

struct DatabaseTarget {
  enum class Backend { sqlite, postgresql } backend;
  std::string sqlite_path;    // sqlite only
  std::string libpq_conninfo; // postgresql only: "host=... port=... dbname=... user=..."
};

// Throws ConfigError naming what is wrong. PostgreSQL: connecting gives up after
// connect_timeout_seconds unless the URL sets its own `connect_timeout`.
DatabaseTarget parse_database_url(const std::string& url, int connect_timeout_seconds = 5);

}  // namespace dlq
