// Column bindings between SOCI and the domain structs, beside the SQL they bind.
#include "store/message_row.hpp"

#include <stdexcept>

#include "store/prepared.hpp"

namespace dlq::store {

const char* const kMessageColumns =
    "id, queue, payload, status, retry_count, max_retries, retry_after, last_error, created_at, "
    "updated_at, priority, job_type, idempotency_key, error_class, dead_reason, checkpoint, "
    "lease_expiries, attempts, first_attempt_at, last_attempt_at, dead_at, replay_count, "
    "lease_expires_at, lease_id, worker, life_started_at, status_at, fingerprint, title, "
    "worker_version, effect_count, sqs_attributes, life_attempts, dead_letter_queue, "
    "sqs_hidden_until, sqs_receipt";

const char* const MessageUpdateRow::kSql =
    "UPDATE messages SET payload = :payload, status = :status, retry_count = :retry_count, "
    "max_retries = :max_retries, retry_after = :retry_after, last_error = :last_error, "
    "updated_at = :updated_at, priority = :priority, error_class = :error_class, "
    "dead_reason = :dead_reason, checkpoint = :checkpoint, lease_expiries = :lease_expiries, "
    "attempts = :attempts, first_attempt_at = :first_attempt_at, "
    "last_attempt_at = :last_attempt_at, dead_at = :dead_at, replay_count = :replay_count, "
    "lease_expires_at = :lease_expires_at, lease_id = :lease_id, worker = :worker, "
    "life_started_at = :life_started_at, status_at = :status_at, fingerprint = :fingerprint, "
    "title = :title, worker_version = :worker_version, effect_count = :effect_count, "
    "life_attempts = :life_attempts, dead_letter_queue = :dead_letter_queue, "
    "sqs_hidden_until = :sqs_hidden_until, sqs_receipt = :sqs_receipt WHERE id = :id";

const char* const AttemptRow::kInsertSql =
    "INSERT INTO attempts (message_id, attempt, outcome, claimed_at, finished_at, worker, error, "
    "error_class, stack, cause, actor, reason, previous_payload, count, fingerprint, title, life, "
    "replay_id, worker_version, trial) VALUES (:message_id, :attempt, :outcome, :claimed_at, "
    ":finished_at, :attempt_worker, :error, :attempt_error_class, :stack, :cause, :actor, :reason, "
    ":previous_payload, :attempt_count, :attempt_fingerprint, :attempt_title, :attempt_life, "
    ":attempt_replay_id, :attempt_worker_version, :attempt_trial)";

const char* const AttemptRow::kColumns =
    "message_id, attempt, outcome, claimed_at, finished_at, worker, error, error_class, stack, "
    "cause, actor, reason, previous_payload, count, fingerprint, title, life, replay_id, worker_version, "
    "trial";
namespace {

template <class T>
std::optional<std::string> name_or_null(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  return std::string(to_string(*v));
}

}  // namespace

void MessageRow::exchange_into(soci::statement& st) {
  using soci::into;
  st.exchange(into(id));
  st.exchange(into(queue));
  st.exchange(into(payload));
  st.exchange(into(status));
  st.exchange(into(retry_count));
  st.exchange(into(max_retries));
  st.exchange(into(retry_after));
  st.exchange(into(last_error));
  st.exchange(into(created_at));
  st.exchange(into(updated_at));
  st.exchange(into(priority));
  st.exchange(into(job_type));
  st.exchange(into(idempotency_key));
  st.exchange(into(error_class));
  st.exchange(into(dead_reason));
  st.exchange(into(checkpoint));
  st.exchange(into(lease_expiries));
  st.exchange(into(attempts));
  st.exchange(into(first_attempt_at));
  st.exchange(into(last_attempt_at));
  st.exchange(into(dead_at));
  st.exchange(into(replay_count));
  st.exchange(into(lease_expires_at));
  st.exchange(into(lease_id));
  st.exchange(into(worker));
  st.exchange(into(life_started_at));
  st.exchange(into(status_at));
  st.exchange(into(fingerprint));
  st.exchange(into(title));
  st.exchange(into(worker_version));
  st.exchange(into(effect_count));
  st.exchange(into(sqs_attributes));
  st.exchange(into(life_attempts));
  st.exchange(into(dead_letter_queue));
  st.exchange(into(sqs_hidden_until));
  st.exchange(into(sqs_receipt));
}

Message MessageRow::to_message() const {
  Message m;
  m.id = id;
  m.queue = queue;
  m.payload = payload;
  auto s = parse_status(status);
  if (!s) throw std::runtime_error("unknown status in database: " + status);
  m.status = *s;
  m.retry_count = static_cast<int>(retry_count);
  m.max_retries = static_cast<int>(max_retries);
  m.retry_after = retry_after;
  m.last_error = last_error;
  m.created_at = created_at;
  m.updated_at = updated_at;
  m.priority = static_cast<int>(priority);
  m.job_type = job_type;
  m.idempotency_key = idempotency_key;
  if (error_class) m.error_class = parse_error_class(*error_class);
  if (dead_reason) m.dead_reason = parse_dead_reason(*dead_reason);
  m.checkpoint = checkpoint;
  m.lease_expiries = static_cast<int>(lease_expiries);
  m.attempts = static_cast<int>(attempts);
  m.first_attempt_at = first_attempt_at;
  m.last_attempt_at = last_attempt_at;
  m.dead_at = dead_at;
  m.replay_count = static_cast<int>(replay_count);
  m.lease_expires_at = lease_expires_at;
  m.lease_id = lease_id;
  m.worker = worker;
  m.life_started_at = life_started_at;
  m.status_at = status_at;
  m.fingerprint = fingerprint;
  m.title = title;
  m.worker_version = worker_version;
  m.effect_count = static_cast<int>(effect_count);
  m.sqs_attributes = sqs_attributes;
  m.life_attempts = static_cast<int>(life_attempts);
  m.dead_letter_queue = dead_letter_queue;
  m.sqs_hidden_until = sqs_hidden_until;
  m.sqs_receipt = sqs_receipt;
  return m;
}

std::vector<Message> fetch_messages(Connection& c, soci::statement& st, const MessageRow& row) {
  std::vector<Message> out;
  for_each_row(c, st, [&] { out.push_back(row.to_message()); });
  return out;
}

void MessageUpdateRow::exchange_use(soci::statement& st) {
  each([&](const char* name, auto& value) { st.exchange(soci::use(value, name)); });
}

void MessageUpdateRow::assign(const Message& m) {
  payload = m.payload;
  status = std::string(to_string(m.status));
  retry_count = m.retry_count;
  max_retries = m.max_retries;
  retry_after = m.retry_after;
  last_error = m.last_error;
  updated_at = m.updated_at;
  priority = m.priority;
  error_class = name_or_null(m.error_class);
  dead_reason = name_or_null(m.dead_reason);
  checkpoint = m.checkpoint;
  lease_expiries = m.lease_expiries;
  attempts = m.attempts;
  first_attempt_at = m.first_attempt_at;
  last_attempt_at = m.last_attempt_at;
  dead_at = m.dead_at;
  replay_count = m.replay_count;
  lease_expires_at = m.lease_expires_at;
  lease_id = m.lease_id;
  worker = m.worker;
  life_started_at = m.life_started_at;
  status_at = m.status_at;
  fingerprint = m.fingerprint;
  title = m.title;
  worker_version = m.worker_version;
  effect_count = m.effect_count;
  life_attempts = m.life_attempts;
  dead_letter_queue = m.dead_letter_queue;
  sqs_hidden_until = m.sqs_hidden_until;
  sqs_receipt = m.sqs_receipt;
  id = m.id;
}

void AttemptRow::exchange_into(soci::statement& st) {
  using soci::into;
  st.exchange(into(message_id));
  st.exchange(into(attempt));
  st.exchange(into(outcome));
  st.exchange(into(claimed_at));
  st.exchange(into(finished_at));
  st.exchange(into(worker));
  st.exchange(into(error));
  st.exchange(into(error_class));
  st.exchange(into(stack));
  st.exchange(into(cause));
  st.exchange(into(actor));
  st.exchange(into(reason));
  st.exchange(into(previous_payload));
  st.exchange(into(count));
  st.exchange(into(fingerprint));
  st.exchange(into(title));
  st.exchange(into(life));
  st.exchange(into(replay_id));
  st.exchange(into(worker_version));
  st.exchange(into(trial));
}

void AttemptRow::exchange_use(soci::statement& st) {
  using soci::use;
  st.exchange(use(message_id, "message_id"));
  st.exchange(use(attempt, "attempt"));
  st.exchange(use(outcome, "outcome"));
  st.exchange(use(claimed_at, "claimed_at"));
  st.exchange(use(finished_at, "finished_at"));
  st.exchange(use(worker, "attempt_worker"));
  st.exchange(use(error, "error"));
  st.exchange(use(error_class, "attempt_error_class"));
  st.exchange(use(stack, "stack"));
  st.exchange(use(cause, "cause"));
  st.exchange(use(actor, "actor"));
  st.exchange(use(reason, "reason"));
  st.exchange(use(previous_payload, "previous_payload"));
  st.exchange(use(count, "attempt_count"));
  st.exchange(use(fingerprint, "attempt_fingerprint"));
  st.exchange(use(title, "attempt_title"));
  st.exchange(use(life, "attempt_life"));
  st.exchange(use(replay_id, "attempt_replay_id"));
  st.exchange(use(worker_version, "attempt_worker_version"));
  st.exchange(use(trial, "attempt_trial"));
}

void AttemptRow::assign(const AttemptRecord& a) {
  message_id = a.message_id;
  attempt = a.attempt;
  outcome = std::string(to_string(a.outcome));
  claimed_at = a.claimed_at;
  finished_at = a.finished_at;
  worker = a.worker;
  error = a.error;
  error_class = name_or_null(a.error_class);
  stack = a.stack;
  cause = a.cause;
  actor = a.actor;
  reason = a.reason;
  previous_payload = a.previous_payload;
  count = a.count;
  fingerprint = a.fingerprint;
  title = a.title;
  life = a.life;
  replay_id = a.replay_id;
  worker_version = a.worker_version;
  trial = a.trial;
}

AttemptRecord AttemptRow::to_record() const {
  AttemptRecord a;
  a.message_id = message_id;
  a.attempt = static_cast<int>(attempt);
  a.outcome = parse_attempt_outcome(outcome).value_or(AttemptOutcome::failed);
  a.claimed_at = claimed_at;
  a.finished_at = finished_at;
  a.worker = worker;
  a.error = error;
  if (error_class) a.error_class = parse_error_class(*error_class);
  a.stack = stack;
  a.cause = cause;
  a.actor = actor;
  a.reason = reason;
  a.previous_payload = previous_payload;
  a.count = static_cast<int>(count);
  a.fingerprint = fingerprint;
  a.title = title;
  a.life = static_cast<int>(life);
  a.replay_id = replay_id;
  a.worker_version = worker_version;
  a.trial = trial;
  return a;
}

}  // namespace dlq::store
