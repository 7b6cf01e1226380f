// Claims: due pending messages of a queue move to processing under a new lease, atomically (the
// one writer's transaction on SQLite, SKIP LOCKED on PostgreSQL), in claim order. One per
// connection, on a store thread.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <utility>
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

  // A claim whose answer is taken after flush(), in the order they came (take()). PostgreSQL: it
  // waits, and flush() makes every waiting claim of the transaction, those of one queue and job
  // types in one statement (docs/performance.md). SQLite: claim() at once.
  void claim_later(ClaimParams p);
  // Just before the commit, after the group's enqueues are stored: makes the waiting claims.
  void flush();
  // The oldest claim's messages (after flush()).
  std::vector<Message> take();
  // The transaction was rolled back: nothing waits, nothing is answered.
  void discard();

 private:
  struct Statements;  // claim_sql.cpp: each kept statement with its SQL and its binds
  // A claim of claim_later and, once made, its messages.
  struct Block {
    ClaimParams params;
    std::optional<std::vector<Message>> result;
  };

  std::vector<Message> claim_in_two_steps(const ClaimParams& p);
  // One statement for claims of one queue and job types, rows handed out in their order.
  void claim_together(const std::vector<Block*>& waiting);
  // Rows as RETURNING gave them (with each payload's size), in claim order under p's budget.
  std::vector<Message> in_claim_order(std::vector<std::pair<Message, long long>> rows,
                                      const ClaimParams& p);

  Connection& c_;
  std::unique_ptr<Statements> kept_;
  std::deque<Block> blocks_;  // claim_later's claims, oldest first
};

}  // namespace dlq::store
