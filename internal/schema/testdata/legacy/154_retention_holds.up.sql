-- Retention holds: an operator stops every deletion of a queue's messages
-- (a legal hold, an investigation) until the hold is released. While a
-- queue has an active hold:
--   * no seconds rule applies to it: lethe.queue_windows, which
--     lethe.retention_cutoffs reads, answers NULL windows for it
--     (retentionSeconds, completedRetentionSeconds,
--     maxWaitTimeSeconds);
--   * its consumed bound is 0 (lethe.completed_bound): every message
--     counts as wanted, so a tier check moves its segments to the held
--     area instead of dropping them, a held month holding any of them is
--     not dropped (lethe.leaf_pending), and a tier change holds what it
--     would delete;
--   * its dead letters are not purged (DLQ_RETENTION_DAYS) and cannot be
--     deleted, and the queue cannot be deleted (the trigger below);
--   * it has no time to loss (migration 155 reads the same windows).
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

-- Each queue's rule windows in seconds, defined once: NULL is a rule that
-- is off, and every rule is off while the queue is held.
-- lethe.retention_cutoffs (the sweep, its dry run and the status) and the
-- time to loss (lethe.group_loss, migration 155) read it.
CREATE VIEW lethe.queue_windows AS
SELECT q.id AS queue_id, q.name AS queue_name,
       CASE WHEN q.retention_enabled AND q.retention_seconds > 0 AND NOT h.held
            THEN q.retention_seconds::bigint END AS retention_seconds,
       CASE WHEN q.retention_enabled AND q.completed_retention_seconds > 0 AND NOT h.held
            THEN q.completed_retention_seconds::bigint END AS completed_seconds,
       CASE WHEN q.max_wait_time_seconds > 0 AND NOT h.held
            THEN q.max_wait_time_seconds::bigint END AS evict_seconds,
       greatest(q.dedup_window_seconds, q.completed_retention_seconds, 900)::bigint AS txn_seconds
  FROM lethe.queues q
 CROSS JOIN LATERAL (SELECT lethe.queue_held(q.id) AS held) h;

-- Migration 010's cutoffs, now read off the windows (a NULL window gives a
-- NULL cutoff).
CREATE OR REPLACE FUNCTION lethe.retention_cutoffs(p_now timestamptz)
RETURNS TABLE (queue_id bigint, queue_name text, retention_cutoff timestamptz,
               completed_cutoff timestamptz, evict_cutoff timestamptz, txn_cutoff timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT w.queue_id, w.queue_name,
           p_now - make_interval(secs => w.retention_seconds),
           p_now - make_interval(secs => w.completed_seconds),
           p_now - make_interval(secs => w.evict_seconds),
           p_now - make_interval(secs => w.txn_seconds)
      FROM lethe.queue_windows w
$$;

CREATE OR REPLACE FUNCTION lethe.completed_bound(p_partition uuid) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN EXISTS (SELECT 1 FROM lethe.partitions p
                              WHERE p.id = p_partition AND lethe.queue_held(p.queue_id))
                THEN 0
                ELSE (SELECT min(g.next_wanted) FROM lethe.group_positions(p_partition) g) END
$$;

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
REVOKE ALL ON lethe.queue_windows FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.refuse_held_queue_delete() FROM PUBLIC;
