-- The SQS front's dead-letter queues (issue 39). dead_letter_queue: the RedrivePolicy target a
-- message's queue named when the message died (replay clears it); the DLQ shows and receives the
-- dead letters stamped with its name. sqs_hidden_until and sqs_receipt: a DLQ receive hides such a
-- dead letter from other DLQ receives until then, under that receipt; its status stays dead.
ALTER TABLE messages ADD COLUMN dead_letter_queue TEXT;
ALTER TABLE messages ADD COLUMN sqs_hidden_until BIGINT;
ALTER TABLE messages ADD COLUMN sqs_receipt TEXT;
CREATE INDEX messages_dead_letter_queue ON messages (dead_letter_queue, dead_at, id)
  WHERE dead_letter_queue IS NOT NULL;
