// Numbered schema migrations per dialect (lib/store/<dialect>/NNN_name.sql, embedded at build
// time), applied at start-up in order, each once, safe when two nodes start at the same time.
#pragma once

#include <limits>
#include <vector>

namespace dlq::store {

class Connection;

struct Migration {
  int version;
  const char* name;
  const char* sql;
};

const std::vector<Migration>& sqlite_migrations();
const std::vector<Migration>& postgres_migrations();

// Applies every migration newer than the database's version, in one transaction; with `up_to`,
// only those up to that version (tests build the database an earlier release made).
void apply_migrations(Connection& c, int up_to = std::numeric_limits<int>::max());
// The newest applied version (0 for an empty database) and the newest this build knows.
int applied_version(Connection& c);
int latest_version(const Connection& c);

}  // namespace dlq::store
