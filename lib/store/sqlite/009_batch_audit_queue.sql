-- Batch actions name their queue in the entry's own `queue` when their filter names one, so that
-- GET /audit?queue=q finds them (before 009 they wrote it only inside `filter`). Entries stored
-- earlier get it from their filter; one whose filter spans queues keeps NULL.
UPDATE audit_log
   SET queue = CASE WHEN json_valid(filter) THEN json_extract(filter, '$.queue') END
 WHERE queue IS NULL AND filter IS NOT NULL
   AND action IN ('batch_replay', 'dismiss', 'batch_replay_pause', 'batch_replay_resume',
                  'batch_replay_cancel');
