// Claims: due pending messages of a queue move to processing under a new lease, atomically (the
// one writer's transaction on SQLite, SKIP LOCKED on PostgreSQL), in claim order. One per
// connection, on a store thread.
#pragma once

#include <memory>
#include <vector>

#include "store/store.hpp"

namespace dlq::store {

class Connection;

class ClaimSql {
 public:
  explicit ClaimSql(Connection& c);
  ~ClaimSql();
  ClaimSql(const ClaimSql&) = delete;
  ClaimSql& operator=(const ClaimSql&) = delete;

  // Up to p.max messages, in claim order (priority, then created_at, then id).
  std::vector<Message> claim(const ClaimParams& p);

 private:
  struct Statements;  // claim_sql.cpp: each kept statement with its SQL and its binds

  std::vector<Message> claim_in_two_steps(const ClaimParams& p);

  Connection& c_;
  std::unique_ptr<Statements> kept_;
};

}  // namespace dlq::store
