-- GET /audit pages newest first by id, optionally filtered by actor or queue: each filter gets
-- an index in id order (the action filter has had one since 001).
CREATE INDEX audit_log_by_actor ON audit_log (actor, id);
CREATE INDEX audit_log_by_queue ON audit_log (queue, id);
