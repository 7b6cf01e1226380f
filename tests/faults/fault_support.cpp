#include "faults/fault_support.hpp"

#include <cstdlib>
#include <stdexcept>

namespace dlq::test {

SqliteFile::SqliteFile(const std::string& path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw std::runtime_error("opening " + path + ": " + why);
  }
  sqlite3_busy_timeout(db_, 10000);
}

SqliteFile::~SqliteFile() { sqlite3_close(db_); }

std::vector<std::vector<std::string>> SqliteFile::rows(const std::string& sql) const {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    throw std::runtime_error("preparing " + sql + ": " + sqlite3_errmsg(db_));
  }
  std::vector<std::vector<std::string>> out;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
      const auto* text = sqlite3_column_text(stmt, i);
      row.emplace_back(text ? reinterpret_cast<const char*>(text) : "");
    }
    out.push_back(std::move(row));
  }
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) throw std::runtime_error("running " + sql + ": " + sqlite3_errmsg(db_));
  return out;
}

long long SqliteFile::scalar(const std::string& sql) const {
  auto r = rows(sql);
  if (r.empty() || r.front().empty()) throw std::runtime_error("no value from " + sql);
  return std::stoll(r.front().front());
}

std::string sqlite_path(const std::string& database_url) {
  if (database_url.rfind("sqlite:", 0) != 0) throw std::runtime_error("not SQLite: " + database_url);
  return database_url.substr(7);
}

int env_count(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  try {
    return std::stoi(v);
  } catch (const std::exception&) {
    return fallback;
  }
}

DlqdOptions faulty_dlqd(const std::string& faults_json, const std::string& database_url,
                        const std::string& more_config) {
  DlqdOptions o("{\"log\": {\"level\": \"warn\"}, \"testing\": {\"faults\": " + faults_json + "}" +
                    (more_config.empty() ? "" : ", " + more_config) + "}",
                database_url);
  o.extra_args.push_back("--allow-testing-faults");
  return o;
}

}  // namespace dlq::test
