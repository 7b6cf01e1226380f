// Every entity's SQL on one connection: what a store job runs against. The entities reach each
// other through it (a replay run replays messages; every operator's change writes an audit
// entry), and it is what the store threads tell before a commit and after a rollback.
#pragma once

#include <string>
#include <utility>

#include "store/audit_sql.hpp"
#include "store/claim_sql.hpp"
#include "store/desk_sql.hpp"
#include "store/effect_sql.hpp"
#include "store/trial_sql.hpp"
#include "store/housekeeping_sql.hpp"
#include "store/incident_backfill_sql.hpp"
#include "store/incident_desk_sql.hpp"
#include "store/incident_sql.hpp"
#include "store/leadership_sql.hpp"
#include "store/message_reads.hpp"
#include "store/message_sql.hpp"
#include "store/queue_names_sql.hpp"
#include "store/run_sql.hpp"
#include "store/sqs_queue_sql.hpp"

namespace dlq::store {

struct EntitySql {
  // `node`: this process's id in change notifications (PostgreSQL).
  EntitySql(Connection& c, std::string node)
      : audit(c),
        names(c),
        incidents(c),
        incident_desk(c, audit),
        backfill(c, incidents),
        effects(c),
        trials(c),
        messages(c, audit, names, incidents, effects, std::move(node)),
        claims(c),
        reads(c),
        runs(c, messages, audit),
        desk(c, messages, reads, runs, audit, effects),
        housekeeping(c, audit, names, incidents, effects, trials),
        leadership(c),
        sqs_queues(c) {}
  EntitySql(const EntitySql&) = delete;
  EntitySql& operator=(const EntitySql&) = delete;

  // The transaction is about to commit / was rolled back (MessageSql::before_commit; the
  // incidents' counts after dead_letter_hours, the one order every commit takes their locks in).
  void before_commit() {
    messages.before_commit();  // stores the group's waiting enqueues first
    claims.flush();            // so that the group's waiting claims may take them
    incidents.before_commit();
    names.end_transaction();
  }
  void discard_pending() {
    claims.discard();
    messages.discard_pending();
    incidents.discard_pending();
    names.end_transaction();
  }

  AuditSql audit;
  QueueNamesSql names;
  IncidentSql incidents;
  IncidentDeskSql incident_desk;
  IncidentBackfillSql backfill;
  EffectSql effects;
  TrialSql trials;
  MessageSql messages;
  ClaimSql claims;
  MessageReads reads;
  RunSql runs;
  DeskSql desk;
  HousekeepingSql housekeeping;
  LeadershipSql leadership;
  SqsQueueSql sqs_queues;
};

}  // namespace dlq::store
