-- Incident alerts and mutes (issue 33). alert_level: what the leader has told of the incident
-- since its dead last rose from 0 (0 nothing; 1 incident_opened; 10, 100, … the highest
-- threshold told; what a muted or unwatched incident reached counts as told), set back to 0 in
-- the statement that empties it. alert_sent_at: its last event (alerts.min_interval_seconds).
-- muted_until / mute_reason: POST /dlq/incidents/{fingerprint}/mute (NULL: not muted).
ALTER TABLE incidents ADD COLUMN alert_level INTEGER NOT NULL DEFAULT 0;
ALTER TABLE incidents ADD COLUMN alert_sent_at INTEGER;
ALTER TABLE incidents ADD COLUMN muted_until INTEGER;
ALTER TABLE incidents ADD COLUMN mute_reason TEXT;
-- Incidents open before these events existed have been told what they reached.
UPDATE incidents SET alert_level = CASE
    WHEN dead >= 1000000000 THEN 1000000000 WHEN dead >= 100000000 THEN 100000000
    WHEN dead >= 10000000 THEN 10000000 WHEN dead >= 1000000 THEN 1000000
    WHEN dead >= 100000 THEN 100000 WHEN dead >= 10000 THEN 10000 WHEN dead >= 1000 THEN 1000
    WHEN dead >= 100 THEN 100 WHEN dead >= 10 THEN 10 ELSE 1 END
  WHERE dead > 0;
