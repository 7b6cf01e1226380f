// Retention of the incident tables (IncidentSql::prune): idle incidents, then the hours past
// what per_hour shows. Statements prepared per sweep, not kept: a sweep runs every few minutes.
#include "store/connection.hpp"
#include "store/incident_sql.hpp"
#include "store/prepared.hpp"

namespace dlq::store {

using soci::into;
using soci::use;

// Idle incidents first, then old hours, each in key order (incidents before incident_hours, as
// before_commit takes them), so that retention and live commits lock rows in one order.
IncidentsPruned IncidentSql::prune(const IncidentPruneParams& p) {
  IncidentsPruned out;
  long long limit = p.limit;
  std::string fingerprint;
  if (p.idle_before) {
    long long idle = *p.idle_before;
    std::vector<std::string> idle_ones;
    soci::statement st = prepare_call(
        c_, "SELECT fingerprint FROM incidents WHERE dead = 0 AND last_death_at < :idle "
            "ORDER BY fingerprint LIMIT :limit",
        [&](soci::statement& s) {
          s.exchange(into(fingerprint));
          s.exchange(use(idle, "idle"));
          s.exchange(use(limit, "limit"));
        });
    for_each_row(c_, st, [&] { idle_ones.push_back(fingerprint); });
    for (auto& fp : idle_ones) {
      // Checked again under the row's lock: a death since the read keeps it.
      soci::statement del = prepare_call(
          c_, "DELETE FROM incidents WHERE fingerprint = :fingerprint AND dead = 0 "
              "AND last_death_at < :idle",
          [&](soci::statement& s) {
            s.exchange(use(fp, "fingerprint"));
            s.exchange(use(idle, "idle"));
          });
      del.execute(true);
      bool deleted = del.get_affected_rows() > 0;
      c_.finish(del);
      if (!deleted) continue;
      ++out.incidents;
      c_.session() << "DELETE FROM incident_queues WHERE fingerprint = :fingerprint",
          use(fp, "fingerprint");
      c_.session() << "DELETE FROM incident_hours WHERE fingerprint = :fingerprint",
          use(fp, "fingerprint");
    }
  }
  long long before = p.hours_before;
  std::vector<std::string> with_old_hours;
  soci::statement st = prepare_call(
      c_, "SELECT DISTINCT fingerprint FROM incident_hours WHERE hour < :before "
          "ORDER BY fingerprint LIMIT :limit",
      [&](soci::statement& s) {
        s.exchange(into(fingerprint));
        s.exchange(use(before, "before"));
        s.exchange(use(limit, "limit"));
      });
  for_each_row(c_, st, [&] { with_old_hours.push_back(fingerprint); });
  for (auto& fp : with_old_hours) {
    soci::statement del = prepare_call(
        c_, "DELETE FROM incident_hours WHERE fingerprint = :fingerprint AND hour < :before",
        [&](soci::statement& s) {
          s.exchange(use(fp, "fingerprint"));
          s.exchange(use(before, "before"));
        });
    del.execute(true);
    out.hours += del.get_affected_rows();
    c_.finish(del);
  }
  return out;
}

}  // namespace dlq::store
