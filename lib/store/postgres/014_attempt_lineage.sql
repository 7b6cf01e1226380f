-- Lineage of a history entry (issue 32): `life` is the message's replay_count when the entry was
-- written (a `replayed` entry carries the count its replay made), `replay_id` the batch replay run
-- that wrote a `replayed` entry (NULL for every other entry and for single replays).
ALTER TABLE attempts ADD COLUMN life BIGINT NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN replay_id BIGINT;
-- Every replay adds one to replay_count and writes one `replayed` entry, so an entry's life is the
-- number of `replayed` entries of its message up to it. Only replayed messages have any but 0.
UPDATE attempts SET life = (
    SELECT COUNT(*) FROM attempts r
    WHERE r.message_id = attempts.message_id AND r.outcome = 'replayed' AND r.id <= attempts.id)
  WHERE message_id IN (SELECT id FROM messages WHERE replay_count > 0);
-- Both fills touch only replayed messages' entries (the constant defaults add the columns without
-- rewriting the table).
-- A run replayed each of its items at most once, as its actor with its reason, between its
-- start and its last step; its items that were replayed have no outcome and lie before next_seq.
-- The `replayed` entry of such a message written in that window as that actor with that reason is
-- the run's (a single replay by the same actor with the same reason inside a run's window cannot
-- be told apart; the earliest run wins).
UPDATE attempts SET replay_id = (
    SELECT MIN(run.id) FROM replay_run_items i JOIN replay_runs run ON run.id = i.run_id
    WHERE i.message_id = attempts.message_id AND i.outcome IS NULL AND i.seq < run.next_seq
      AND attempts.finished_at >= run.start_at AND attempts.finished_at <= run.updated_at
      AND (run.actor = attempts.actor OR (run.actor IS NULL AND attempts.actor IS NULL))
      AND (run.reason = attempts.reason OR (run.reason IS NULL AND attempts.reason IS NULL)))
  WHERE outcome = 'replayed';
