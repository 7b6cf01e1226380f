// What the fault tests share: reading a SQLite file dlqd left behind, the dlqd they start with
// faults armed, and how many rounds a run makes.
#pragma once

#include <sqlite3.h>

#include <string>
#include <vector>

#include "support/dlqd_process.hpp"

namespace dlq::test {

// A SQLite database, read-only from the test's side (dlqd is stopped when the test reads).
class SqliteFile {
 public:
  explicit SqliteFile(const std::string& path);
  ~SqliteFile();
  SqliteFile(const SqliteFile&) = delete;
  SqliteFile& operator=(const SqliteFile&) = delete;

  // Every row of a query, each column as text ("" for NULL).
  std::vector<std::vector<std::string>> rows(const std::string& sql) const;
  long long scalar(const std::string& sql) const;

 private:
  sqlite3* db_ = nullptr;
};

// The path of a `sqlite:PATH` URL.
std::string sqlite_path(const std::string& database_url);

// An environment variable as a count: `fallback` when unset or not a number.
int env_count(const char* name, int fallback);

// dlqd with `faults` (the members of testing.faults, as JSON) and --allow-testing-faults.
DlqdOptions faulty_dlqd(const std::string& faults_json, const std::string& database_url,
                        const std::string& more_config = "");

}  // namespace dlq::test
