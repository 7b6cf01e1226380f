// Applying migrations once, in order, under a lock (PostgreSQL advisory lock / SQLite write lock).
#include "store/migrations.hpp"

#include <string>

#include "model/logging.hpp"
#include "model/time.hpp"
#include "store/connection.hpp"

namespace dlq::store {
namespace {

const std::vector<Migration>& migrations_for(const Connection& c) {
  return c.is_sqlite() ? sqlite_migrations() : postgres_migrations();
}

// Splits a migration file into statements: each ends with ';' at the end of a line.
std::vector<std::string> split_statements(const std::string& sql) {
  std::vector<std::string> out;
  std::string current;
  std::size_t pos = 0;
  while (pos < sql.size()) {
    std::size_t eol = sql.find('\n', pos);
    std::string line = sql.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    pos = eol == std::string::npos ? sql.size() : eol + 1;
    std::string trimmed = line;
    trimmed.erase(0, trimmed.find_first_not_of(" \t\r"));
    if (trimmed.empty() || trimmed.starts_with("--")) continue;
    current += line + "\n";
    auto last = line.find_last_not_of(" \t\r");
    if (last != std::string::npos && line[last] == ';') {
      out.push_back(current);
      current.clear();
    }
  }
  if (current.find_first_not_of(" \t\r\n") != std::string::npos) out.push_back(current);
  return out;
}

const char* const kCreateVersionTable =
    "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, "
    "name TEXT NOT NULL, applied_at BIGINT NOT NULL)";

}  // namespace

int applied_version(Connection& c) {
  long long version = 0;
  soci::indicator ind = soci::i_null;
  c.session() << "SELECT MAX(version) FROM schema_migrations", soci::into(version, ind);
  return ind == soci::i_ok ? static_cast<int>(version) : 0;
}

int latest_version(const Connection& c) {
  const auto& all = migrations_for(c);
  return all.empty() ? 0 : all.back().version;
}

void apply_migrations(Connection& c, int up_to) {
  c.begin_write();
  try {
    if (!c.is_sqlite()) {
      // Two nodes starting at once: the second waits here, then finds nothing left to do.
      c.execute("SELECT pg_advisory_xact_lock(7274001)");
    }
    c.execute(kCreateVersionTable);
    int current = applied_version(c);
    for (const auto& m : migrations_for(c)) {
      if (m.version <= current || m.version > up_to) continue;
      for (const auto& statement : split_statements(m.sql)) c.execute(statement);
      long long version = m.version;
      std::string name = m.name;
      long long now = SystemClock().now();
      c.session() << "INSERT INTO schema_migrations (version, name, applied_at) "
                     "VALUES (:version, :name, :applied_at)",
          soci::use(version, "version"), soci::use(name, "name"), soci::use(now, "applied_at");
      log::info("migration applied", {{"version", std::to_string(m.version)}, {"name", m.name}});
    }
    c.commit();
  } catch (...) {
    c.rollback();
    throw;
  }
}

}  // namespace dlq::store
