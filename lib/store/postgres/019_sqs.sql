-- The SQS front (issue 38): the queues SQS clients created (CreateQueue), with the attributes
-- they set explicitly and their tags, each a JSON object of strings. A queue used only through
-- dlq's own API has no row here, and SQS answers QueueDoesNotExist for it until CreateQueue
-- adopts it. retention_set_at: when MessageRetentionPeriod was last set (its sweep counts from
-- the later of that and a message's created_at).
CREATE TABLE sqs_queues (
  name             TEXT   COLLATE "C" PRIMARY KEY,
  attributes       TEXT   NOT NULL DEFAULT '{}',
  tags             TEXT   NOT NULL DEFAULT '{}',
  created_at       BIGINT NOT NULL,
  updated_at       BIGINT NOT NULL,
  retention_set_at BIGINT
);
-- An SQS message's MessageAttributes as sent (JSON), which dlq's own views do not show; and the
-- attempts made before the message's current life (set at each replay), so that SQS's
-- ApproximateReceiveCount is attempts - life_attempts.
ALTER TABLE messages ADD COLUMN sqs_attributes TEXT;
ALTER TABLE messages ADD COLUMN life_attempts INTEGER NOT NULL DEFAULT 0;
