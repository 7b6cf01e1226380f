// The backfill's statements: dead messages stored before fingerprints (migration 012) read in id
// order with their last failure's stack, and their fingerprint and title written where they are
// still missing, each written row counted into its incident (IncidentSql) in the same
// transaction. One per connection, on a store thread.
#pragma once

#include <memory>
#include <unordered_set>
#include <vector>

#include "store/desk.hpp"

namespace dlq::store {

class Connection;
class IncidentSql;

class IncidentBackfillSql {
 public:
  IncidentBackfillSql(Connection& c, IncidentSql& incidents);
  ~IncidentBackfillSql();
  IncidentBackfillSql(const IncidentBackfillSql&) = delete;
  IncidentBackfillSql& operator=(const IncidentBackfillSql&) = delete;

  std::vector<UnprintedDead> unprinted(MessageId after, int limit);
  // The rows written: a row no longer dead, or given a fingerprint since it was read (by a
  // death of its own, or another node's backfill), is left alone and not counted.
  long long write(const std::vector<PrintedDead>& rows);

 private:
  struct Statements;  // incident_backfill_sql.cpp

  // Sets each row's fingerprint and title where it is still dead without one: the ids it set.
  std::unordered_set<MessageId> set_prints(const std::vector<PrintedDead>& rows);

  Connection& c_;
  IncidentSql& incidents_;
  std::unique_ptr<Statements> kept_;
};

}  // namespace dlq::store
