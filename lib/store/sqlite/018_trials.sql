-- Trial runs (issue 36): a dead message handed once to a worker that opted in, to see whether a
-- replay would succeed. A trial is not an attempt: the message's row stays as it is; the trial
-- ends in one history entry (outcome 'trial', its summary in attempts.trial). At most one open
-- (pending or running) trial per message, kept by the start's transaction under the message's
-- lock. Trials go with their message (purge, retention).
CREATE TABLE trials (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  message_id       BIGINT  NOT NULL,
  queue            TEXT    NOT NULL,
  job_type         TEXT    NOT NULL,
  status           TEXT    NOT NULL
                   CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'expired')),
  actor            TEXT,
  reason           TEXT,
  payload          TEXT,
  created_at       BIGINT  NOT NULL,
  claimed_at       BIGINT,
  finished_at      BIGINT,
  lease_id         TEXT,
  lease_expires_at BIGINT,
  worker           TEXT,
  worker_version   TEXT,
  error            TEXT,
  error_class      TEXT,
  stack            TEXT,
  cause            TEXT,
  would_effects    TEXT    NOT NULL DEFAULT '[]'
);
-- Claims with "trials": true take a queue's pending trials oldest first; the expiry looks at
-- the open ones.
CREATE INDEX trials_open ON trials (queue, status, id);
CREATE INDEX trials_of_message ON trials (message_id, id);
ALTER TABLE attempts ADD COLUMN trial TEXT;
