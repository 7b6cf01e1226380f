-- Who leads this database, as the leader last wrote it (one row at most). A hint for operators
-- and for the leader's own checks; the lock itself is the process owning the file (SQLite) or a
-- session-level advisory lock (PostgreSQL).
CREATE TABLE leadership (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  node       TEXT    NOT NULL,
  since      INTEGER NOT NULL,
  renewed_at INTEGER NOT NULL
);
