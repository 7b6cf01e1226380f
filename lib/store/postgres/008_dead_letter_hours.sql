-- How many messages went dead, per queue and hour (the UI's overview chart, GET /dlq/hourly).
-- A message's dead_at is cleared when it is replayed, so the messages table cannot answer "how
-- many died at 3 o'clock" once some of them were replayed; this counter is written in the same
-- transaction that makes a message dead. `hour`: the hour's first millisecond (UTC).
CREATE TABLE dead_letter_hours (
  queue TEXT   NOT NULL,
  hour  BIGINT NOT NULL,
  count BIGINT NOT NULL,
  PRIMARY KEY (queue, hour)
);
CREATE INDEX dead_letter_hours_by_hour ON dead_letter_hours (hour);
-- The deaths the messages table still remembers (dead and dismissed messages).
INSERT INTO dead_letter_hours (queue, hour, count)
  SELECT queue, (dead_at / 3600000) * 3600000, COUNT(*) FROM messages
  WHERE dead_at IS NOT NULL GROUP BY 1, 2;
