-- Incidents: dead letters grouped by their cause (messages.fingerprint, migration 012). The
-- counts move in the transaction that moves a message (a death, a replay, a dismissal, a purge),
-- one statement per row per commit in key order (like dead_letter_hours), so GET /dlq/incidents
-- reads a thousand causes without counting a million messages.
--
-- incidents: one row per fingerprint that ever died. `title`, `error_class` and `job_type` are
-- its first death's (a lease expiry's error_class is NULL). `dead` counts its dead messages now;
-- `replayed` and `dismissed` count what left it that way since it began. `first_dead_at` and
-- `last_dead_at` are the least and greatest dead_at of its dead messages now (NULL at dead 0);
-- `last_death_at` is its latest death ever (retention drops an incident at dead 0 once that is
-- older than retention.dead_seconds).
CREATE TABLE incidents (
  fingerprint   TEXT   PRIMARY KEY,
  title         TEXT   NOT NULL,
  error_class   TEXT,
  job_type      TEXT,
  dead          BIGINT NOT NULL DEFAULT 0,
  replayed      BIGINT NOT NULL DEFAULT 0,
  dismissed     BIGINT NOT NULL DEFAULT 0,
  first_dead_at BIGINT,
  last_dead_at  BIGINT,
  last_death_at BIGINT NOT NULL
);
-- The two sorts of GET /dlq/incidents, over the incidents that have dead messages.
CREATE INDEX incidents_by_dead ON incidents (dead DESC, fingerprint) WHERE dead > 0;
CREATE INDEX incidents_by_last_dead ON incidents (last_dead_at DESC, fingerprint) WHERE dead > 0;
CREATE INDEX incidents_by_last_death ON incidents (last_death_at) WHERE dead = 0;

-- An incident's dead messages per queue now (rows at 0 stay until the incident goes).
CREATE TABLE incident_queues (
  fingerprint TEXT   NOT NULL,
  queue       TEXT   NOT NULL,
  dead        BIGINT NOT NULL,
  PRIMARY KEY (fingerprint, queue)
);
CREATE INDEX incident_queues_by_queue ON incident_queues (queue, fingerprint) WHERE dead > 0;

-- An incident's deaths per hour (`hour`: the hour's first millisecond, UTC), as dead_letter_hours
-- counts them per queue: never lowered; retention drops the rows past 48 hours (per_hour shows 48).
CREATE TABLE incident_hours (
  fingerprint TEXT   NOT NULL,
  hour        BIGINT NOT NULL,
  count       BIGINT NOT NULL,
  PRIMARY KEY (fingerprint, hour)
);
CREATE INDEX incident_hours_by_hour ON incident_hours (hour);

-- An incident's dead messages: the least and greatest dead_at (kept exact when one leaves), the
-- since/until filter, and its highest ids (sample_ids, GET /dlq?fingerprint= in id order).
CREATE INDEX messages_dead_by_fingerprint_at ON messages (fingerprint, dead_at)
  WHERE status = 'dead';
CREATE INDEX messages_dead_by_fingerprint_id ON messages (fingerprint, id)
  WHERE status = 'dead';
