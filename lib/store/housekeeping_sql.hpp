// Whole-database work: deleting finished messages with their history (retention, purge), the
// counts per queue behind GET /queues and the metrics, deaths per hour, and whether the schema
// is the one this build knows.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/store.hpp"

namespace dlq::store {

class AuditSql;
class Connection;

class HousekeepingSql {
 public:
  HousekeepingSql(Connection& c, AuditSql& audit) : c_(c), audit_(audit) {}

  Purged purge(const PurgeParams& p);
  std::vector<QueueStats> stats(const std::optional<std::string>& queue, TimeMs now);
  // GET /dlq/hourly: deaths per hour from `from_hour` on, `hours` of them (one queue or all).
  std::vector<long long> dead_hourly(const std::optional<std::string>& queue, TimeMs from_hour,
                                     int hours);
  // The database answers and carries every migration this build knows.
  bool schema_current();

 private:
  Connection& c_;
  AuditSql& audit_;
};

}  // namespace dlq::store
