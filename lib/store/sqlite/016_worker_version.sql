-- The worker's version (issue 36): sent with a claim (`worker_version`, at most 64 bytes), kept
-- on the message while its lease lasts, as `worker` is, and on each attempt entry that lease
-- ends, so the history says which build of the worker code ran each attempt. NULL: not sent, or
-- an entry stored before this migration.
ALTER TABLE messages ADD COLUMN worker_version TEXT;
ALTER TABLE attempts ADD COLUMN worker_version TEXT;
