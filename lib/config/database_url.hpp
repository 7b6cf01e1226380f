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

// Throws ConfigError naming what is wrong.
DatabaseTarget parse_database_url(const std::string& url);

}  // namespace dlq
