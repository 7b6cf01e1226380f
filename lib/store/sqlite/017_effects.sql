-- Recorded side effects (issue 36): a worker writes a key `started` before a dangerous call and
-- `done` after it (with its result), so that a retry or a replay does only what is missing. The
-- rows outlive retries and replays and go with the message (purge, retention). A `cleared` key
-- is deleted. messages.effect_count says how many a message holds, so that a claim reads them
-- only for messages that have any.
CREATE TABLE effects (
  message_id  INTEGER NOT NULL,
  effect_key  TEXT    NOT NULL,
  state       TEXT    NOT NULL CHECK (state IN ('started', 'done')),
  description TEXT,
  result      TEXT,
  attempt     INTEGER NOT NULL,
  recorded_at BIGINT  NOT NULL,
  resolved_by TEXT,
  PRIMARY KEY (message_id, effect_key)
);
ALTER TABLE messages ADD COLUMN effect_count INTEGER NOT NULL DEFAULT 0;
