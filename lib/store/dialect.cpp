// The two dialects: SQLite's JSON1 functions against PostgreSQL's json set-returning functions,
// its one writer against row locks, and where each database is cheaper another way.
#include "store/dialect.hpp"

namespace dlq::store {

std::string Dialect::json_texts(std::string_view param) const {
  std::string p(param);
  if (kind == Kind::sqlite) return "SELECT value FROM json_each(:" + p + ")";
  return "SELECT json_array_elements_text(CAST(:" + p + " AS json))";
}

std::string Dialect::json_ids(std::string_view param) const {
  std::string p(param);
  if (kind == Kind::sqlite) return "SELECT value FROM json_each(:" + p + ")";
  return "SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(:" + p + " AS json))";
}

std::string Dialect::json_numbered_ids(std::string_view param) const {
  std::string p(param);
  if (kind == Kind::sqlite) return "SELECT key AS seq, value AS id FROM json_each(:" + p + ")";
  return "SELECT ord - 1 AS seq, CAST(value AS BIGINT) AS id "
         "FROM json_array_elements_text(CAST(:" + p + " AS json)) WITH ORDINALITY AS t(value, ord)";
}

namespace {

Dialect make_sqlite() {
  Dialect d{};
  d.kind = Dialect::Kind::sqlite;
  d.begin_write = "BEGIN IMMEDIATE";
  return d;
}

Dialect make_postgres() {
  Dialect d{};
  d.kind = Dialect::Kind::postgresql;
  d.begin_write = "BEGIN";
  d.for_update = " FOR UPDATE";
  d.for_update_skip_locked = " FOR UPDATE SKIP LOCKED";
  d.insert_returns_id = true;
  d.claim_in_one_statement = true;
  d.combines_statements = true;
  return d;
}

}  // namespace

const Dialect& sqlite_dialect() {
  static const Dialect d = make_sqlite();
  return d;
}

const Dialect& postgres_dialect() {
  static const Dialect d = make_postgres();
  return d;
}

}  // namespace dlq::store
