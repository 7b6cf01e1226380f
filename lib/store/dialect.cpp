// The SQL text of both dialects. They differ in locking (FOR UPDATE [SKIP LOCKED], BEGIN
// IMMEDIATE), in how a JSON array is expanded, and where each database is cheaper another way:
// SQLite claims in two statements and inserts without RETURNING; PostgreSQL inserts a batch in
// one statement and writes a transition with its history entry in one.
#include "store/dialect.hpp"

namespace dlq::store {

const char* const kMessageColumns =
    "id, queue, payload, status, retry_count, max_retries, retry_after, last_error, created_at, "
    "updated_at, priority, job_type, idempotency_key, error_class, dead_reason, checkpoint, "
    "lease_expiries, attempts, first_attempt_at, last_attempt_at, dead_at, replay_count, "
    "lease_expires_at, lease_id, worker, life_started_at, status_at";

namespace {

const std::string kCols = kMessageColumns;

// Statements that read the same on both databases.
Dialect common(Dialect::Kind kind) {
  Dialect d{};
  d.kind = kind;
  d.insert_message =
      "INSERT INTO messages (queue, payload, status, retry_count, max_retries, retry_after, "
      "created_at, updated_at, priority, job_type, idempotency_key, life_started_at, status_at) "
      "VALUES (:queue, :payload, 'pending', 0, :max_retries, :retry_after, :created_at, "
      ":updated_at, :priority, :job_type, :key, :life_started_at, :status_at) "
      "ON CONFLICT (queue, idempotency_key) "
      "WHERE idempotency_key IS NOT NULL AND status IN ('pending', 'processing') DO NOTHING";
  // In-flight holders first (there is at most one), then the newest succeeded one.
  d.find_key_holder =
      "SELECT " + kCols + " FROM messages WHERE queue = :queue AND idempotency_key = :key "
      "AND status IN ('pending', 'processing', 'succeeded') "
      "ORDER BY CASE WHEN status = 'succeeded' THEN 1 ELSE 0 END, id DESC LIMIT 1";
  d.select_message = "SELECT " + kCols + " FROM messages WHERE id = :id AND queue = :queue";
  d.update_message =
      "UPDATE messages SET payload = :payload, status = :status, retry_count = :retry_count, "
      "max_retries = :max_retries, retry_after = :retry_after, last_error = :last_error, "
      "updated_at = :updated_at, priority = :priority, error_class = :error_class, "
      "dead_reason = :dead_reason, checkpoint = :checkpoint, lease_expiries = :lease_expiries, "
      "attempts = :attempts, first_attempt_at = :first_attempt_at, "
      "last_attempt_at = :last_attempt_at, dead_at = :dead_at, replay_count = :replay_count, "
      "lease_expires_at = :lease_expires_at, lease_id = :lease_id, worker = :worker, "
      "life_started_at = :life_started_at, status_at = :status_at WHERE id = :id";
  d.select_key_holders =
      "SELECT status FROM messages WHERE queue = :queue AND idempotency_key = :key AND id <> :id";
  d.list_all = "SELECT " + kCols + " FROM messages WHERE queue = :queue "
               "ORDER BY created_at, id LIMIT :limit OFFSET :offset";
  d.list_by_status = "SELECT " + kCols + " FROM messages WHERE queue = :queue AND status = :status "
                     "ORDER BY created_at, id LIMIT :limit OFFSET :offset";
  d.list_ids_all = "SELECT id FROM messages WHERE queue = :queue "
                   "ORDER BY created_at, id LIMIT :limit OFFSET :offset";
  d.list_ids_by_status = "SELECT id FROM messages WHERE queue = :queue AND status = :status "
                         "ORDER BY created_at, id LIMIT :limit OFFSET :offset";
  d.insert_attempt =
      "INSERT INTO attempts (message_id, attempt, outcome, claimed_at, finished_at, worker, error, "
      "error_class, stack, cause, actor, reason, previous_payload) VALUES (:message_id, :attempt, "
      ":outcome, :claimed_at, :finished_at, :worker, :error, :error_class, :stack, :cause, :actor, "
      ":reason, :previous_payload)";
  // This node's record is renewed; another node's is taken over only once it went stale.
  d.leadership_renew =
      "INSERT INTO leadership (id, node, since, renewed_at) VALUES (1, :node, :now, :renewed) "
      "ON CONFLICT (id) DO UPDATE SET node = excluded.node, renewed_at = excluded.renewed_at, "
      "since = CASE WHEN leadership.node = excluded.node THEN leadership.since "
      "ELSE excluded.since END "
      "WHERE leadership.node = excluded.node OR leadership.renewed_at < :stale_before";
  d.leadership_select = "SELECT node, since, renewed_at FROM leadership WHERE id = 1";
  d.select_attempts =
      "SELECT message_id, attempt, outcome, claimed_at, finished_at, worker, error, error_class, "
      "stack, cause, actor, reason, previous_payload FROM attempts WHERE message_id = :id "
      "ORDER BY id";
  d.next_due = "SELECT MIN(retry_after) FROM messages WHERE status = 'pending' "
               "AND retry_after IS NOT NULL AND retry_after > :now";
  d.next_lease_expiry =
      "SELECT MIN(lease_expires_at) FROM messages WHERE status = 'processing' "
      "AND lease_expires_at IS NOT NULL";
  return d;
}

// The next claimable messages of a queue: due, of the asked job types, in claim order.
std::string claimable(const std::string& columns, const std::string& job_filter) {
  return "SELECT " + columns + " FROM messages WHERE queue = :queue AND status = 'pending' "
         "AND (retry_after IS NULL OR retry_after <= :due_at) AND (:njobs = 0 OR " + job_filter + ") "
         "ORDER BY priority DESC, created_at, id LIMIT :max";
}

// PostgreSQL's claim, one statement: it sets everything a new attempt changes on the rows its
// subquery locks (rows another transaction holds are skipped, never waited for).
std::string claim_sql(const std::string& job_filter) {
  return "UPDATE messages SET status = 'processing', lease_id = :token || '-' || id, "
         "lease_expires_at = :until, worker = :worker, attempts = attempts + 1, "
         "first_attempt_at = COALESCE(first_attempt_at, :first_at), last_attempt_at = :last_at, "
         "updated_at = :updated_at, status_at = :status_at "
         "WHERE id IN (" + claimable("id", job_filter) + " FOR UPDATE SKIP LOCKED) RETURNING " +
         kCols;
}

Dialect make_sqlite() {
  Dialect d = common(Dialect::Kind::sqlite);
  d.begin_write = "BEGIN IMMEDIATE";
  d.id_in_json_list = "id IN (SELECT value FROM json_each(:ids))";
  d.insert_run_items =
      "INSERT INTO replay_run_items (run_id, seq, message_id) "
      "SELECT :run_id, key, value FROM json_each(:ids)";
  d.select_message_locked = d.select_message;  // one writer: the write transaction is the lock
  d.claim_select = claimable(kCols, "job_type IN (SELECT value FROM json_each(:jobs))");
  d.claim_mark =
      "UPDATE messages SET status = 'processing', lease_id = :lease_id, lease_expires_at = :until, "
      "worker = :worker, attempts = attempts + 1, first_attempt_at = :first_at, "
      "last_attempt_at = :last_at, updated_at = :updated_at, status_at = :status_at WHERE id = :id";
  d.reap_select = "SELECT " + kCols + " FROM messages WHERE status = 'processing' "
                  "AND lease_expires_at <= :now ORDER BY lease_expires_at LIMIT :limit";
  return d;
}

Dialect make_postgres() {
  Dialect d = common(Dialect::Kind::postgresql);
  d.begin_write = "BEGIN";
  d.insert_message += " RETURNING id";
  d.update_message_with_attempt = "WITH updated AS (" + d.update_message + ") " + d.insert_attempt;
  // Rows are inserted in the order of the sorted SELECT, and the identity default is evaluated
  // as each is inserted, so the ids ascend in input order (a store test checks it).
  d.insert_messages =
      "INSERT INTO messages (queue, payload, status, retry_count, max_retries, retry_after, "
      "created_at, updated_at, priority, job_type, life_started_at, status_at) "
      "SELECT :queue, item->>'payload', 'pending', 0, CAST(item->>'max_retries' AS BIGINT), "
      "CAST(item->>'run_at' AS BIGINT), :created_at, :updated_at, "
      "CAST(item->>'priority' AS BIGINT), item->>'job_type', :life_started_at, :status_at "
      "FROM json_array_elements(CAST(:items AS json)) WITH ORDINALITY AS t(item, ord) "
      "ORDER BY ord RETURNING id";
  d.id_in_json_list =
      "id IN (SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(:ids AS json)))";
  d.insert_run_items =
      "INSERT INTO replay_run_items (run_id, seq, message_id) "
      "SELECT :run_id, ord - 1, CAST(value AS BIGINT) "
      "FROM json_array_elements_text(CAST(:ids AS json)) WITH ORDINALITY AS t(value, ord)";
  d.select_message_locked = d.select_message + " FOR UPDATE";
  d.claim = claim_sql("job_type IN (SELECT jsonb_array_elements_text(CAST(:jobs AS jsonb)))");
  d.reap_select = "SELECT " + kCols + " FROM messages WHERE status = 'processing' "
                  "AND lease_expires_at <= :now ORDER BY lease_expires_at LIMIT :limit "
                  "FOR UPDATE SKIP LOCKED";
  return d;
}

}  // namespace

const Dialect& sqlite_dialect() {
  static const Dialect d = make_sqlite();
  return d;
}

const Dialect& postgres_dialect() {
  static const Dialect d = make_postgres();
  return d;
}

}  // namespace dlq::store
