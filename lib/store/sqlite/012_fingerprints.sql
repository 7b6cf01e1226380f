-- The cause of each failure as incidents group it (issue 32, api-decisions.md "Fingerprints"):
-- a history entry's title and fingerprint, and the message's latest failure's, like last_error.
-- Rows stored before 012 have none (the backfill gives dead messages theirs; old entries stay).
ALTER TABLE messages ADD COLUMN fingerprint TEXT;
ALTER TABLE messages ADD COLUMN title TEXT;
ALTER TABLE attempts ADD COLUMN fingerprint TEXT;
ALTER TABLE attempts ADD COLUMN title TEXT;
