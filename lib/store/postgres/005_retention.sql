-- Retention and purge delete finished messages in small batches by the time they entered their
-- status (dead ones: dead_at, which is when they became dead), across queues or in one queue.
CREATE INDEX messages_finished_by_age ON messages (status, status_at)
  WHERE status IN ('succeeded', 'dead', 'dismissed');
CREATE INDEX messages_finished_by_queue_age ON messages (queue, status, status_at)
  WHERE status IN ('succeeded', 'dead', 'dismissed');
