-- Who leads this database, as the leader last wrote it (one row at most). A hint for operators
-- and for the leader's own checks; the lock itself is a session-level advisory lock held by the
-- leader on a connection of its own.
CREATE TABLE leadership (
  id         BIGINT  PRIMARY KEY CHECK (id = 1),
  node       TEXT    NOT NULL,
  since      BIGINT  NOT NULL,
  renewed_at BIGINT  NOT NULL
);
