// SqlStore, the dead-letter desk's side: dead letters, incidents, batch previews and replay runs,
// and the SQS front's queue registry and dead-letter view. Each bridges to its entity's SQL.
#include "store/entity_sql.hpp"
#include "store/sql_store.hpp"
#include "store/sql_store_jobs.hpp"

namespace dlq::store {

awaitable<std::vector<Message>> SqlStore::messages_dead(DeadListParams p) {
  return read<std::vector<Message>>([p = std::move(p)](EntitySql& sql) { return sql.desk.dead_list(p); });
}

awaitable<std::vector<DeadRef>> SqlStore::messages_dead_refs(DeadListParams p) {
  return read<std::vector<DeadRef>>([p = std::move(p)](EntitySql& sql) { return sql.desk.dead_refs(p); });
}

awaitable<DeadMatch> SqlStore::dead_match(DeadMatchParams p) {
  return read<DeadMatch>([p = std::move(p)](EntitySql& sql) { return sql.desk.dead_match(p); });
}

awaitable<std::vector<Incident>> SqlStore::incidents_list(IncidentQuery p) {
  return read<std::vector<Incident>>(
      [p = std::move(p)](EntitySql& sql) { return sql.incident_desk.list(p); });
}

awaitable<std::optional<Incident>> SqlStore::incident_find(std::string fingerprint,
                                                           TimeMs from_hour, int hours) {
  return read<std::optional<Incident>>(
      [fingerprint = std::move(fingerprint), from_hour, hours](EntitySql& sql) {
        return sql.incident_desk.find(fingerprint, from_hour, hours);
      });
}

awaitable<IncidentGauges> SqlStore::incident_gauges(int top) {
  return read<IncidentGauges>([top](EntitySql& sql) { return sql.incident_desk.gauges(top); });
}

awaitable<std::optional<IncidentMuted>> SqlStore::incident_mute(IncidentMuteParams p) {
  return write<std::optional<IncidentMuted>>(
      [p = std::move(p)](EntitySql& sql) { return sql.incident_desk.mute(p); });
}

awaitable<std::vector<IncidentAlert>> SqlStore::incidents_alert(IncidentAlertParams p) {
  return write<std::vector<IncidentAlert>>(
      [p](EntitySql& sql) { return sql.incident_desk.alert(p); });
}

awaitable<IncidentsPruned> SqlStore::incidents_prune(IncidentPruneParams p) {
  return write<IncidentsPruned>([p](EntitySql& sql) { return sql.incidents.prune(p); });
}

awaitable<std::vector<UnprintedDead>> SqlStore::incidents_unprinted(MessageId after, int limit) {
  return read<std::vector<UnprintedDead>>(
      [after, limit](EntitySql& sql) { return sql.backfill.unprinted(after, limit); });
}

awaitable<long long> SqlStore::incidents_backfill(std::vector<PrintedDead> rows) {
  return write<long long>(
      [rows = std::move(rows)](EntitySql& sql) { return sql.backfill.write(rows); });
}

// Not a coroutine: GCC 12 mishandles a lambda temporary holding strings inside a co_await
// expression (the job received a bitwise copy of the frame's strings; valgrind showed the free).
awaitable<bool> SqlStore::batch_preview_save(BatchPreview p) {
  return write<bool>([p = std::move(p)](EntitySql& sql) {
    sql.desk.preview_save(p);
    return true;
  });
}

awaitable<Result<Confirmed>> SqlStore::run_start(RunStartParams p) {
  return write<Result<Confirmed>>([p = std::move(p)](EntitySql& sql) { return sql.desk.start_run(p); });
}

awaitable<Result<Confirmed>> SqlStore::batch_confirm(ConfirmParams p) {
  return write<Result<Confirmed>>([p = std::move(p)](EntitySql& sql) { return sql.desk.confirm(p); });
}

awaitable<DismissBatch> SqlStore::messages_dismiss_batch(DismissBatchParams p) {
  return write<DismissBatch>([p = std::move(p)](EntitySql& sql) { return sql.desk.dismiss_batch(p); });
}

awaitable<std::optional<ReplayRun>> SqlStore::replay_run_find(long long id) {
  return read<std::optional<ReplayRun>>([id](EntitySql& sql) { return sql.runs.find(id); });
}

awaitable<std::vector<ReplayRun>> SqlStore::replay_runs_list(RunListParams p) {
  return read<std::vector<ReplayRun>>([p](EntitySql& sql) { return sql.runs.list(p); });
}

awaitable<RunStep> SqlStore::replay_run_step(RunStepParams p) {
  return write<RunStep>([p = std::move(p)](EntitySql& sql) { return sql.runs.step(p); });
}

awaitable<Result<ReplayRun>> SqlStore::replay_run_change(RunChangeParams p) {
  return write<Result<ReplayRun>>([p = std::move(p)](EntitySql& sql) { return sql.runs.change(p); });
}

awaitable<Result<std::optional<SqsQueueRow>>> SqlStore::sqs_queue_change(std::string name,
                                                                          DecideSqsQueue decide) {
  return write<Result<std::optional<SqsQueueRow>>>(
      [name = std::move(name), decide = std::move(decide)](EntitySql& sql) {
        return sql.sqs_queues.change(name, decide);
      });
}

awaitable<std::optional<SqsQueueRow>> SqlStore::sqs_queue_find(std::string name) {
  return read<std::optional<SqsQueueRow>>(
      [name = std::move(name)](EntitySql& sql) { return sql.sqs_queues.find(name); });
}

awaitable<std::vector<SqsQueueRow>> SqlStore::sqs_queues_page(SqsQueuePage p) {
  return read<std::vector<SqsQueueRow>>(
      [p = std::move(p)](EntitySql& sql) { return sql.sqs_queues.page(p); });
}

awaitable<bool> SqlStore::sqs_queue_delete(std::string name) {
  return write<bool>([name = std::move(name)](EntitySql& sql) { return sql.sqs_queues.remove(name); });
}

awaitable<std::vector<Message>> SqlStore::sqs_dead_receive(SqsDeadReceive p) {
  return write<std::vector<Message>>(
      [p = std::move(p)](EntitySql& sql) { return sql.sqs_queues.dead_receive(p); });
}

awaitable<bool> SqlStore::sqs_dead_hide(SqsDeadHide p) {
  return write<bool>([p = std::move(p)](EntitySql& sql) { return sql.sqs_queues.dead_hide(p); });
}

awaitable<SqsDeadCounts> SqlStore::sqs_dead_counts(std::string dlq, TimeMs now) {
  return read<SqsDeadCounts>([dlq = std::move(dlq), now](EntitySql& sql) {
    return sql.sqs_queues.dead_counts(dlq, now);
  });
}

awaitable<long long> SqlStore::dead_count(std::string queue) {
  return read<long long>(
      [queue = std::move(queue)](EntitySql& sql) { return sql.sqs_queues.dead_count(queue); });
}

}  // namespace dlq::store
