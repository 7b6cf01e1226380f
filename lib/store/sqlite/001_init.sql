-- dlq schema, SQLite dialect. Times are integer milliseconds since the Unix epoch (UTC).
CREATE TABLE messages (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  queue            TEXT    NOT NULL,
  payload          TEXT    NOT NULL,
  status           TEXT    NOT NULL
                   CHECK (status IN ('pending', 'processing', 'succeeded', 'dead', 'dismissed')),
  retry_count      INTEGER NOT NULL DEFAULT 0,
  max_retries      INTEGER NOT NULL,
  retry_after      INTEGER,
  last_error       TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  priority         INTEGER NOT NULL DEFAULT 0,
  job_type         TEXT,
  idempotency_key  TEXT,
  error_class      TEXT,
  dead_reason      TEXT,
  checkpoint       TEXT,
  lease_expiries   INTEGER NOT NULL DEFAULT 0,
  attempts         INTEGER NOT NULL DEFAULT 0,
  first_attempt_at INTEGER,
  last_attempt_at  INTEGER,
  dead_at          INTEGER,
  replay_count     INTEGER NOT NULL DEFAULT 0,
  lease_expires_at INTEGER,
  lease_id         TEXT,
  worker           TEXT,
  life_started_at  INTEGER NOT NULL,
  status_at        INTEGER NOT NULL
);

-- Claim: the next due pending message of a queue, highest priority first, then FIFO.
CREATE INDEX messages_claim ON messages (queue, priority DESC, created_at, id)
  WHERE status = 'pending';
-- Listing one queue, with or without a status filter, in (created_at, id) order.
CREATE INDEX messages_by_status ON messages (queue, status, created_at, id);
CREATE INDEX messages_by_created ON messages (queue, created_at, id);
-- The reaper: the earliest lease expiry.
CREATE INDEX messages_leases ON messages (lease_expires_at) WHERE status = 'processing';
-- The due-time timer: the earliest future retry_after.
CREATE INDEX messages_due ON messages (retry_after)
  WHERE status = 'pending' AND retry_after IS NOT NULL;
-- Idempotency: at most one in-flight message per queue and key, enforced here.
CREATE UNIQUE INDEX messages_idempotency_in_flight ON messages (queue, idempotency_key)
  WHERE idempotency_key IS NOT NULL AND status IN ('pending', 'processing');
CREATE INDEX messages_idempotency ON messages (queue, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

-- The history of a message: one row per finished attempt, and one per replay or dismissal.
CREATE TABLE attempts (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  message_id       INTEGER NOT NULL,
  attempt          INTEGER NOT NULL,
  outcome          TEXT    NOT NULL,
  claimed_at       INTEGER,
  finished_at      INTEGER NOT NULL,
  worker           TEXT,
  error            TEXT,
  error_class      TEXT,
  stack            TEXT,
  cause            TEXT,
  actor            TEXT,
  reason           TEXT,
  previous_payload TEXT
);
CREATE INDEX attempts_by_message ON attempts (message_id, id);

-- Who did what to which messages, and why.
CREATE TABLE audit_log (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  at          INTEGER NOT NULL,
  actor       TEXT,
  action      TEXT    NOT NULL,
  queue       TEXT,
  message_ids TEXT,
  filter      TEXT,
  reason      TEXT,
  details     TEXT
);
CREATE INDEX audit_log_by_action ON audit_log (action, id);
