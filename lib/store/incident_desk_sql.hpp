// The incidents as operators see them (tables incidents, incident_queues, incident_hours;
// migration 013): the reads behind GET /dlq/incidents and the gauges of /metrics. What commits
// count into them is IncidentSql's. One per connection, on a store thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/store.hpp"

namespace dlq::store {

class Connection;

class IncidentDeskSql {
 public:
  explicit IncidentDeskSql(Connection& c);
  ~IncidentDeskSql();
  IncidentDeskSql(const IncidentDeskSql&) = delete;
  IncidentDeskSql& operator=(const IncidentDeskSql&) = delete;

  std::vector<Incident> list(const IncidentQuery& q);
  std::optional<Incident> find(const std::string& fingerprint, TimeMs from_hour, int hours);
  IncidentGauges gauges(int top);

 private:
  struct Statements;  // incident_desk_sql.cpp: the kept sample-ids probe

  // Fills queues, per_hour and sample_ids of incidents read from their rows.
  void complete(std::vector<Incident>& incidents, TimeMs from_hour, int hours);

  Connection& c_;
  std::unique_ptr<Statements> kept_;
};

}  // namespace dlq::store
