// What differs between SQLite and PostgreSQL, and nothing more: the write transaction's start,
// row locks, how a JSON array bound as text becomes rows, whether an INSERT returns its id, and
// the shape a claim and a batch take. Every statement's text lives with its binds in its entity's
// file (message_sql.cpp, desk_sql.cpp, …) and asks this struct only for these pieces.
#pragma once

#include <string>
#include <string_view>

namespace dlq::store {

struct Dialect {
  enum class Kind { sqlite, postgresql } kind;

  std::string begin_write;  // BEGIN IMMEDIATE on SQLite takes the write lock up front
  // Appended to a SELECT that reads rows it will change. SQLite has one writer: its write
  // transaction is the lock, and both are empty there.
  std::string for_update;              // " FOR UPDATE"
  std::string for_update_skip_locked;  // " FOR UPDATE SKIP LOCKED": claims and the reaper

  // PostgreSQL answers an INSERT's new id with RETURNING id. SQLite reads last_insert_rowid()
  // instead: RETURNING makes it build a temporary table per execution (it more than doubled the
  // cost of an enqueue).
  bool insert_returns_id = false;
  // PostgreSQL claims in one UPDATE … RETURNING whose subquery skips locked rows. SQLite claims
  // in two steps (select, then mark each row), because its UPDATE … RETURNING also builds a
  // temporary table per execution; its one writer makes the two steps atomic.
  bool claim_in_one_statement = false;
  // PostgreSQL saves round trips: a batch of keyless messages in one INSERT, and a transition
  // with its history entry in one statement (a data-modifying WITH). SQLite runs in-process,
  // where a statement costs no round trip.
  bool combines_statements = false;

  // A one-column subquery over the JSON array (text) bound to `:param`: its strings as text, or
  // its numbers as BIGINT ids; numbered: the columns (seq, id), seq counting from 0.
  std::string json_texts(std::string_view param) const;
  std::string json_ids(std::string_view param) const;
  std::string json_numbered_ids(std::string_view param) const;
};

const Dialect& sqlite_dialect();
const Dialect& postgres_dialect();

}  // namespace dlq::store
