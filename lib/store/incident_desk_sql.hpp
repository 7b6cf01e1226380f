// The incidents as operators see them (tables incidents, incident_queues, incident_hours;
// migrations 013, 015): the reads behind GET /dlq/incidents and the gauges of /metrics, the mute
// and the leader's alert marks. What commits count into them is IncidentSql's. One per
// connection, on a store thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/store.hpp"

namespace dlq::store {

class AuditSql;
class Connection;

class IncidentDeskSql {
 public:
  IncidentDeskSql(Connection& c, AuditSql& audit);
  ~IncidentDeskSql();
  IncidentDeskSql(const IncidentDeskSql&) = delete;
  IncidentDeskSql& operator=(const IncidentDeskSql&) = delete;

  std::vector<Incident> list(const IncidentQuery& q);
  std::optional<Incident> find(const std::string& fingerprint, TimeMs from_hour, int hours);
  IncidentGauges gauges(int top);
  std::optional<IncidentMuted> mute(const IncidentMuteParams& p);
  std::vector<IncidentAlert> alert(const IncidentAlertParams& p);

 private:
  struct Statements;  // incident_desk_sql.cpp: the kept sample-ids probe

  // Fills queues, per_hour and sample_ids of incidents read from their rows.
  void complete(std::vector<Incident>& incidents, TimeMs from_hour, int hours);

  Connection& c_;
  AuditSql& audit_;
  std::unique_ptr<Statements> kept_;
};

}  // namespace dlq::store
