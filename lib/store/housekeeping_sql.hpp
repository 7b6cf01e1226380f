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
class EffectSql;
class TrialSql;
class IncidentSql;
class QueueNamesSql;

class HousekeepingSql {
 public:
  HousekeepingSql(Connection& c, AuditSql& audit, QueueNamesSql& names, IncidentSql& incidents,
                  EffectSql& effects, TrialSql& trials)
      : c_(c),
        audit_(audit),
        names_(names),
        incidents_(incidents),
        effects_(effects),
        trials_(trials) {}

  // With their history, their recorded side effects and their trials. Also removes the names of
  // the queues it emptied; dead messages leave their incidents.
  Purged purge(const PurgeParams& p);
  std::vector<QueueStats> stats(const std::optional<std::string>& queue, TimeMs now);
  // GET /queues: a page of the queues that hold messages, by name, each with its counts.
  std::vector<QueueStats> stats_page(const QueuePageParams& p);
  // GET /dlq/hourly: deaths per hour from `from_hour` on, `hours` of them (one queue or all).
  std::vector<long long> dead_hourly(const std::optional<std::string>& queue, TimeMs from_hour,
                                     int hours);
  // The database answers and carries every migration this build knows.
  bool schema_current();

 private:
  // The counts of the queues `where` selects (" AND queue …"; its binds added by `bind`).
  template <class Bind>
  std::vector<QueueStats> stats_where(const std::string& where, Bind&& bind, TimeMs now);

  Connection& c_;
  AuditSql& audit_;
  QueueNamesSql& names_;
  IncidentSql& incidents_;
  EffectSql& effects_;
  TrialSql& trials_;
};

}  // namespace dlq::store
