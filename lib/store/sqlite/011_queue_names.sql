-- The names of the queues that hold messages (limits.max_queues counts them). Enqueue adds a
-- name with its queue's first message; purge and retention remove it with the last one. Names
-- compare as bytes (BINARY), the order GET /queues pages in.
CREATE TABLE queue_names (
  queue TEXT PRIMARY KEY
) WITHOUT ROWID;
INSERT INTO queue_names (queue) SELECT DISTINCT queue FROM messages;

-- Previews in the order they were made (batch_replay.max_previews drops the oldest first); the
-- ones stored before this migration count as the oldest.
ALTER TABLE batch_previews ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
