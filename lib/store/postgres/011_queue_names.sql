-- The names of the queues that hold messages (limits.max_queues counts them). Enqueue adds a
-- name with its queue's first message; purge and retention remove it with the last one. Names
-- compare as bytes (COLLATE "C"), the order GET /queues pages in, whatever the database's
-- collation.
CREATE TABLE queue_names (
  queue TEXT COLLATE "C" PRIMARY KEY
);
INSERT INTO queue_names (queue) SELECT DISTINCT queue FROM messages;

-- Previews in the order they were made (batch_replay.max_previews drops the oldest first); the
-- ones stored before this migration count as the oldest.
ALTER TABLE batch_previews ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
