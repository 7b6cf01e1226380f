-- Queue stats (GET /queues, /metrics) from indexes alone, so that counting a million messages
-- never reads a million rows: counts per (queue, status) come from messages_by_status; these
-- give the oldest ready message per queue (due retries and never-tried messages alike) and the
-- oldest dead one.
CREATE INDEX messages_ready_since
  ON messages (queue, (COALESCE(retry_after, status_at)), retry_after, status_at)
  WHERE status = 'pending';
CREATE INDEX messages_dead_since ON messages (queue, dead_at) WHERE status = 'dead';
