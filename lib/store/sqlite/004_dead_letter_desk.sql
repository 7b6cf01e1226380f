-- The dead-letter desk: the view across queues, stored previews of batch actions, and replay
-- runs with their fixed id lists.

-- GET /dlq pages dead messages in id order, across queues or in one queue.
CREATE INDEX messages_dead ON messages (id) WHERE status = 'dead';
CREATE INDEX messages_dead_by_queue ON messages (queue, id) WHERE status = 'dead';

-- A preview of a batch replay or dismiss: any node may confirm it until it expires. The token is
-- kept as its SHA-256; the filter in canonical form; the matched id set as count + SHA-256, and
-- the job types it holds (a non-idempotent one needs an acknowledgement to confirm).
CREATE TABLE batch_previews (
  token_sha256 TEXT    PRIMARY KEY,
  kind         TEXT    NOT NULL CHECK (kind IN ('replay', 'dismiss')),
  filter       TEXT    NOT NULL,
  matched      INTEGER NOT NULL,
  ids_sha256   TEXT    NOT NULL,
  job_types    TEXT    NOT NULL,
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL
);

-- A batch replay run: its settings, its progress (next_seq: the next item to replay) and its state.
CREATE TABLE replay_runs (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  status          TEXT    NOT NULL
                  CHECK (status IN ('scheduled', 'running', 'paused', 'cancelled', 'done')),
  filter          TEXT    NOT NULL,
  actor           TEXT,
  reason          TEXT,
  created_at      INTEGER NOT NULL,
  start_at        INTEGER NOT NULL,
  delay_seconds   REAL    NOT NULL,
  rate_per_second REAL    NOT NULL,
  keep_order      INTEGER NOT NULL,
  matched         INTEGER NOT NULL,
  next_seq        INTEGER NOT NULL DEFAULT 0,
  replayed        INTEGER NOT NULL DEFAULT 0,
  skipped         INTEGER NOT NULL DEFAULT 0,
  paced_from      INTEGER NOT NULL,
  paced_count     INTEGER NOT NULL DEFAULT 0,
  updated_at      INTEGER NOT NULL
);
CREATE INDEX replay_runs_active ON replay_runs (status, id);

-- The ids a run works on, fixed at confirmation, in the order it replays them. Items before the
-- run's next_seq are done: replayed when `outcome` is NULL, else skipped, with the reason: the
-- message was no longer dead (not_dead), its idempotency key was held (key_held), or it is gone.
CREATE TABLE replay_run_items (
  run_id     INTEGER NOT NULL,
  seq        INTEGER NOT NULL,
  message_id INTEGER NOT NULL,
  outcome    TEXT,
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX replay_run_items_by_message ON replay_run_items (message_id, run_id);
