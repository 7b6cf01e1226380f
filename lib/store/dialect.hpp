// Every SQL statement dlq runs, as named constants per dialect. SQL lives here and nowhere else.
// Placeholders are bound positionally, in the order they appear; no name appears twice in one
// statement (SQLite would fold repeated names into one parameter).
#pragma once

#include <string>

namespace dlq::store {

struct Dialect {
  enum class Kind { sqlite, postgresql } kind;

  std::string begin_write;  // BEGIN IMMEDIATE on SQLite takes the write lock up front

  // The message columns, in the order MessageRow binds them.
  std::string insert_message;         // no row on a key conflict; PostgreSQL: RETURNING id
  // PostgreSQL: many messages without idempotency keys in one statement (one round trip):
  // queue, now x4, items (a JSON array) -> their ids, ascending in input order.
  std::string insert_messages;
  std::string find_key_holder;        // queue, key -> the holder to hand back, if any
  std::string select_message;         // id, queue
  std::string select_message_locked;  // id, queue; FOR UPDATE on PostgreSQL
  std::string update_message;         // every mutable column, then id
  // PostgreSQL: update_message and insert_attempt in one statement (a data-modifying WITH).
  std::string update_message_with_attempt;
  std::string select_key_holders;     // queue, key, id -> statuses
  // PostgreSQL: token, until, worker, now x4, queue, now, njobs, jobs, max -> the claimed rows.
  std::string claim;
  // SQLite claims in two steps (one writer: the transaction is the lock), because its
  // UPDATE ... RETURNING builds a temporary table per execution.
  std::string claim_select;           // queue, now, njobs, jobs, max -> claimable rows, in order
  std::string claim_mark;             // lease_id, until, worker, first_attempt_at, now x3, id
  std::string list_all;               // queue, limit, offset
  std::string list_by_status;         // queue, status, limit, offset
  std::string list_ids_all;           // queue, limit, offset -> ids
  std::string list_ids_by_status;     // queue, status, limit, offset -> ids
  std::string reap_select;            // now, limit -> expired processing messages (locked)
  std::string insert_attempt;
  std::string select_attempts;        // message_id
  std::string next_due;               // now
  std::string next_lease_expiry;
  // Named binds (:node, :now, :renewed, :stale_before), bound by name where they run.
  std::string leadership_renew;
  std::string leadership_select;
  // The dead-letter desk. A WHERE condition "id is in the JSON array :ids"; and the items of a
  // replay run from a JSON array of ids (:run_id, :ids), seq counting from 0.
  std::string id_in_json_list;
  std::string insert_run_items;
};

const Dialect& sqlite_dialect();
const Dialect& postgres_dialect();

// The message columns in MessageRow order, for SELECT and RETURNING lists.
extern const char* const kMessageColumns;

}  // namespace dlq::store
