#include "support/pg_admin.hpp"

#include <cstdlib>
#include <memory>
#include <stdexcept>

#include <libpq-fe.h>

#include "support/temp_dir.hpp"

namespace dlq::test {

Backend test_backend() {
  const char* v = std::getenv("DLQ_TEST_BACKEND");
  if (!v || std::string(v) == "sqlite") return Backend::sqlite;
  if (std::string(v) == "postgresql") return Backend::postgresql;
  throw std::runtime_error("DLQ_TEST_BACKEND must be sqlite or postgresql");
}

std::string pg_admin_url() {
  const char* v = std::getenv("DLQ_TEST_PG_URL");
  if (!v || !*v) {
    throw std::runtime_error(
        "this test needs PostgreSQL: set DLQ_TEST_PG_URL (scripts/test.sh starts a server)");
  }
  return v;
}

void pg_admin_exec(const std::string& sql) { pg_exec(pg_admin_url(), sql); }

void pg_exec(const std::string& url, const std::string& sql) {
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn(PQconnectdb(url.c_str()), &PQfinish);
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    throw std::runtime_error(std::string("cannot reach PostgreSQL: ") + PQerrorMessage(conn.get()));
  }
  std::unique_ptr<PGresult, decltype(&PQclear)> res(PQexec(conn.get(), sql.c_str()), &PQclear);
  auto status = PQresultStatus(res.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    throw std::runtime_error("PostgreSQL refused \"" + sql + "\": " + PQerrorMessage(conn.get()));
  }
}

PgSession::PgSession(const std::string& url) : conn_(PQconnectdb(url.c_str())) {
  auto* conn = static_cast<PGconn*>(conn_);
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string error = PQerrorMessage(conn);
    PQfinish(conn);
    throw std::runtime_error("cannot reach PostgreSQL: " + error);
  }
}

PgSession::~PgSession() { PQfinish(static_cast<PGconn*>(conn_)); }

std::string PgSession::query(const std::string& sql) {
  auto* conn = static_cast<PGconn*>(conn_);
  std::unique_ptr<PGresult, decltype(&PQclear)> res(PQexec(conn, sql.c_str()), &PQclear);
  auto status = PQresultStatus(res.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    throw std::runtime_error("PostgreSQL refused \"" + sql + "\": " + PQerrorMessage(conn));
  }
  if (status == PGRES_TUPLES_OK && PQntuples(res.get()) > 0) return PQgetvalue(res.get(), 0, 0);
  return "";
}

std::string create_pg_database(const std::string& prefix) {
  std::string name = unique_name(prefix);
  pg_admin_exec("CREATE DATABASE " + name);
  std::string admin = pg_admin_url();
  auto slash = admin.rfind('/');
  if (slash == std::string::npos || slash < 13) throw std::runtime_error("bad DLQ_TEST_PG_URL");
  return admin.substr(0, slash + 1) + name;
}

}  // namespace dlq::test
