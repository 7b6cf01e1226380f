// Incidents' counts (tables incidents, incident_queues, incident_hours; migration 013): what a
// transaction changed in them is collected while it moves messages and written just before it
// commits, one statement per row in key order (on PostgreSQL, a commit of deaths alone: one per
// table, its rows in key order); retention of the tables (the reads: IncidentDeskSql). One per
// connection, on a store thread.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/store.hpp"

namespace dlq::store {

class Connection;

// One dead message counted into its incident: the backfill of messages that died before they
// carried a fingerprint counts each through this, as a transition does.
struct IncidentDeath {
  std::string fingerprint;
  std::string title;
  std::optional<std::string> error_class;  // the incident's: none for a lease expiry
  std::optional<std::string> job_type;
  std::string queue;
  TimeMs dead_at = 0;
};

// How a dead message left its incident.
enum class IncidentExit { replayed, dismissed, deleted };

class IncidentSql {
 public:
  explicit IncidentSql(Connection& c);
  ~IncidentSql();
  IncidentSql(const IncidentSql&) = delete;
  IncidentSql& operator=(const IncidentSql&) = delete;

  // A transition from `before` to `after` (the same message): a death with a fingerprint joins
  // its incident, a dead message with one that becomes pending or dismissed leaves it.
  void note_change(const Message& before, const Message& after);
  void note_death(const IncidentDeath& d);
  void note_exit(const std::string& fingerprint, const std::string& queue, IncidentExit how);

  // Writes what this transaction noted: incidents, then incident_queues, then incident_hours,
  // each in key order, so that concurrent PostgreSQL transactions lock their rows in one order.
  // An incident a member left has its first/last_dead_at read again from its dead messages, in a
  // statement after its row is locked: its snapshot holds every earlier committer's messages.
  void before_commit();
  void discard_pending();

  IncidentsPruned prune(const IncidentPruneParams& p);

 private:
  struct Statements;  // incident_sql.cpp: the kept statements with their SQL and binds

  struct Pending {
    std::string title;
    std::optional<std::string> error_class;
    std::optional<std::string> job_type;
    long long dead = 0, replayed = 0, dismissed = 0;
    std::optional<TimeMs> first_death, last_death;  // of the deaths noted
    bool exited = false;  // a member left: first/last_dead_at are read again
  };

  void write_deaths_at_once();  // PostgreSQL, no member left: one statement per table
  void write_each();            // one statement per row

  Connection& c_;
  std::unique_ptr<Statements> kept_;
  std::map<std::string, Pending> incidents_;
  std::map<std::pair<std::string, std::string>, long long> queues_;  // (fingerprint, queue)
  std::map<std::pair<std::string, TimeMs>, long long> hours_;        // (fingerprint, hour)
};

}  // namespace dlq::store
