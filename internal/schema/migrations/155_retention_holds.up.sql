-- Retention holds: an operator stops every deletion of a queue's messages
-- (a legal hold, an investigation) until the hold is released. While a
-- queue has an active hold:
--   * no seconds rule applies to it: lethe.retention_cutoffs answers NULL
--     cutoffs for it (retentionSeconds, completedRetentionSeconds,
--     maxWaitTimeSeconds);
--   * its consumed bound is 0 (lethe.completed_bound): every message
--     counts as wanted, so a tier check moves its segments to the held
--     area instead of dropping them, a held month holding any of them is
--     not dropped (lethe.leaf_pending), and a tier change holds what it
--     would delete;
--   * its dead letters are not purged (DLQ_RETENTION_DAYS) and cannot be
--     deleted, and the queue cannot be deleted (the trigger below);
--   * it has no time to loss (lethe.loss_windows has no row for it).
-- The dedup sidecar (lethe.txns) still ages out: it holds hashes, not
-- messages. Rows are kept after release: they are the audit of who held
-- what, when and why.
CREATE TABLE lethe.retention_holds (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue_id    bigint      NOT NULL,
    queue_name  text        NOT NULL,
    reason      text        NOT NULL CHECK (length(reason) BETWEEN 1 AND 1024),
    placed_at   timestamptz NOT NULL,
    placed_by   text        NOT NULL,
    released_at timestamptz,
    released_by text
);
-- Every predicate above asks for a queue's active holds.
CREATE INDEX retention_holds_active_idx ON lethe.retention_holds (queue_id) WHERE released_at IS NULL;
REVOKE ALL ON lethe.retention_holds FROM PUBLIC;

CREATE FUNCTION lethe.queue_held(p_queue bigint) RETURNS bool
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM lethe.retention_holds h WHERE h.queue_id = p_queue AND h.released_at IS NULL)
$$;

CREATE OR REPLACE FUNCTION lethe.retention_cutoffs(p_now timestamptz)
RETURNS TABLE (queue_id bigint, queue_name text, retention_cutoff timestamptz,
               completed_cutoff timestamptz, evict_cutoff timestamptz, txn_cutoff timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT q.id, q.name,
           CASE WHEN q.retention_enabled AND q.retention_seconds > 0 AND NOT h.held
                THEN p_now - make_interval(secs => q.retention_seconds) END,
           CASE WHEN q.retention_enabled AND q.completed_retention_seconds > 0 AND NOT h.held
                THEN p_now - make_interval(secs => q.completed_retention_seconds) END,
           CASE WHEN q.max_wait_time_seconds > 0 AND NOT h.held
                THEN p_now - make_interval(secs => q.max_wait_time_seconds) END,
           p_now - make_interval(secs => greatest(q.dedup_window_seconds, q.completed_retention_seconds, 900))
      FROM lethe.queues q
     CROSS JOIN LATERAL (SELECT lethe.queue_held(q.id) AS held) h
$$;

CREATE OR REPLACE FUNCTION lethe.completed_bound(p_partition uuid) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN EXISTS (SELECT 1 FROM lethe.partitions p
                              WHERE p.id = p_partition AND lethe.queue_held(p.queue_id))
                THEN 0
                ELSE (SELECT min(g.next_wanted) FROM lethe.group_positions(p_partition) g) END
$$;

-- A held queue loses nothing: no time to loss (migration 154's windows).
CREATE OR REPLACE VIEW lethe.loss_windows AS
SELECT q.id AS queue_id, w.secs AS window_seconds,
       CASE WHEN w.secs = r.evict THEN 'maxWaitTimeSeconds' ELSE 'retentionSeconds' END AS rule
  FROM lethe.queues q
 CROSS JOIN LATERAL (SELECT CASE WHEN q.retention_enabled AND q.retention_seconds > 0
                                 THEN q.retention_seconds::bigint END AS keep,
                            CASE WHEN q.max_wait_time_seconds > 0 THEN q.max_wait_time_seconds::bigint END AS evict) r
 CROSS JOIN LATERAL (SELECT least(r.keep, r.evict) AS secs) w
 WHERE w.secs IS NOT NULL AND NOT lethe.queue_held(q.id);

CREATE FUNCTION lethe.refuse_held_queue_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF lethe.queue_held(OLD.id) THEN
        RAISE EXCEPTION 'queue % is under a retention hold', OLD.name
            USING ERRCODE = 'object_in_use', HINT = 'release its holds first (lethe retention holds)';
    END IF;
    RETURN OLD;
END $$;
CREATE TRIGGER queues_refuse_held_delete BEFORE DELETE ON lethe.queues
    FOR EACH ROW EXECUTE FUNCTION lethe.refuse_held_queue_delete();

REVOKE ALL ON FUNCTION lethe.queue_held(bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.refuse_held_queue_delete() FROM PUBLIC;
