-- Replaces the finished-message indexes of 005 and the stats indexes of 006 (measured on SQLite
-- with a million rows: a retention sweep took 160 s through 005's indexes, 18 s through these).
--
-- Retention and purge delete finished messages in small batches, oldest first by the time they
-- entered their status (dead ones: dead_at, which is when they became dead), across queues or in
-- one queue. One partial index per status: the queries name the status literally, which is what
-- lets SQLite's planner match a partial index (it cannot prove `status = ?` implies a list).
DROP INDEX messages_finished_by_age;
DROP INDEX messages_finished_by_queue_age;
CREATE INDEX messages_succeeded_by_age ON messages (status_at) WHERE status = 'succeeded';
CREATE INDEX messages_dead_by_age ON messages (status_at) WHERE status = 'dead';
CREATE INDEX messages_dismissed_by_age ON messages (status_at) WHERE status = 'dismissed';
CREATE INDEX messages_succeeded_by_queue_age ON messages (queue, status_at)
  WHERE status = 'succeeded';
CREATE INDEX messages_dead_by_queue_age ON messages (queue, status_at) WHERE status = 'dead';
CREATE INDEX messages_dismissed_by_queue_age ON messages (queue, status_at)
  WHERE status = 'dismissed';

-- The oldest ready and oldest dead message per queue (GET /queues, /metrics) from the index
-- alone. `status` is a column too: SQLite 3.40 counts a partial index as covering only when it
-- holds the columns of its own WHERE clause.
DROP INDEX messages_ready_since;
DROP INDEX messages_dead_since;
CREATE INDEX messages_ready_since ON messages (queue, retry_after, status_at, status)
  WHERE status = 'pending';
CREATE INDEX messages_dead_since ON messages (queue, dead_at, status) WHERE status = 'dead';
