-- Deletes one reclaimable partition (with its cursors), checking again
-- under the partition row lock; a cursor row another session holds makes it
-- skip rather than wait. Answers the queue name when it deleted.
CREATE OR REPLACE FUNCTION lethe.cleanup_partition(p_partition uuid, p_idle_before timestamp with time zone, p_now timestamp with time zone) RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_queue text;
    v_name  text;
BEGIN
    SELECT q.name, p.name INTO v_queue, v_name
      FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
     WHERE p.id = p_partition
       FOR UPDATE OF p;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    -- A statement of its own, so it sees what committed before the lock.
    IF NOT lethe.partition_reclaimable(p_partition, p_idle_before) THEN
        RETURN NULL;
    END IF;
    BEGIN
        PERFORM 1 FROM lethe.cursors c WHERE c.partition_id = p_partition FOR UPDATE NOWAIT;
    EXCEPTION WHEN lock_not_available THEN
        RETURN NULL;
    END;
    DELETE FROM lethe.partitions p WHERE p.id = p_partition;
    INSERT INTO lethe.retention_history (executed_at, queue_name, partition_name, partition_id, rule,
                                         segments, frames, bytes)
    VALUES (p_now, v_queue, v_name, p_partition, 'partition_cleanup', 0, 0, 0);
    RETURN v_queue;
END $$;
REVOKE ALL ON FUNCTION lethe.cleanup_partition(p_partition uuid, p_idle_before timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION lethe.completed_bound(p_partition uuid) RETURNS bigint
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE WHEN EXISTS (SELECT 1 FROM lethe.partitions p
                              WHERE p.id = p_partition AND lethe.queue_held(p.queue_id))
                THEN 0
                ELSE (SELECT min(g.next_wanted) FROM lethe.group_positions(p_partition) g) END
$$;
REVOKE ALL ON FUNCTION lethe.completed_bound(p_partition uuid) FROM PUBLIC;

-- lethe.group_positions also counts the queue's required groups: a
-- group declared required and never seen (no cursor here, no
-- subscription) wants everything from the partition's first offset.
CREATE OR REPLACE FUNCTION lethe.group_positions(p_partition uuid) RETURNS TABLE(group_name text, next_wanted bigint, lease_from bigint, lease_to bigint)
    LANGUAGE sql STABLE
    AS $$
    SELECT c.group_name, c.committed + 1,
           CASE WHEN c.lease_id IS NOT NULL THEN c.lease_from END,
           CASE WHEN c.lease_id IS NOT NULL THEN c.lease_to END
      FROM lethe.cursors c
     WHERE c.partition_id = p_partition
    UNION ALL
    SELECT s.group_name,
           CASE WHEN s.from_at IS NULL THEN 0
                ELSE coalesce((SELECT sg.base_offset FROM lethe.segments sg
                                WHERE sg.partition_id = p.id AND sg.last_at >= s.from_at
                                ORDER BY sg.base_offset
                                LIMIT 1), p.next_offset)
           END,
           NULL, NULL
      FROM lethe.partitions p
      JOIN lethe.subscriptions s ON s.queue_id = p.queue_id
     WHERE p.id = p_partition
       AND NOT EXISTS (SELECT 1 FROM lethe.cursors c
                        WHERE c.partition_id = p.id AND c.group_name = s.group_name)
    UNION ALL
    SELECT g.name, 0, NULL, NULL
      FROM lethe.partitions p
      JOIN lethe.queues q ON q.id = p.queue_id
     CROSS JOIN LATERAL unnest(q.required_groups) AS g(name)
     WHERE p.id = p_partition
       AND NOT EXISTS (SELECT 1 FROM lethe.cursors c WHERE c.partition_id = p.id AND c.group_name = g.name)
       AND NOT EXISTS (SELECT 1 FROM lethe.subscriptions s WHERE s.queue_id = q.id AND s.group_name = g.name)
$$;
REVOKE ALL ON FUNCTION lethe.group_positions(p_partition uuid) FROM PUBLIC;

-- Whether a partition may be deleted: empty (no segments: next_offset =
-- low_watermark), no push and no cursor change since p_idle_before, no dead
-- letter (they pin it), no hash still inside its window (the purge ran
-- first, so any hash left is one) and no lease. The cleanup's candidate
-- query, its recheck under the lock and the dry run all ask this.
CREATE OR REPLACE FUNCTION lethe.partition_reclaimable(p_partition uuid, p_idle_before timestamp with time zone) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT EXISTS (
        SELECT 1 FROM lethe.partitions p
         WHERE p.id = p_partition
           AND p.next_offset = p.low_watermark
           AND coalesce(p.last_push_at, p.created_at) < p_idle_before
           AND NOT EXISTS (SELECT 1 FROM lethe.segments s WHERE s.partition_id = p.id)
           AND NOT EXISTS (SELECT 1 FROM lethe.dead_letters d WHERE d.partition_id = p.id)
           AND NOT EXISTS (SELECT 1 FROM lethe.txns t WHERE t.partition_id = p.id)
           AND NOT EXISTS (SELECT 1 FROM lethe.cursors c
                            WHERE c.partition_id = p.id
                              AND (c.lease_id IS NOT NULL OR c.updated_at >= p_idle_before)))
$$;
REVOKE ALL ON FUNCTION lethe.partition_reclaimable(p_partition uuid, p_idle_before timestamp with time zone) FROM PUBLIC;

-- One bounded step of the hash-sidecar purge, linear in its batch: under
-- the partition row lock, read the first p_batch sidecar rows from the
-- head once, find the first still inside the window, and delete the rows
-- before it by a range of the primary key. Rows are written in offset
-- order with the clock moving forward, so nothing past that row is purged.
-- purged counts hashes.
CREATE OR REPLACE FUNCTION lethe.purge_txns_step(p_partition uuid, p_cutoff timestamp with time zone, p_batch integer) RETURNS TABLE(purged integer, done boolean)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_stop   bigint;
    v_end    bigint;
    v_rows   int;
    v_hashes int;
BEGIN
    PERFORM 1 FROM lethe.partitions p WHERE p.id = p_partition FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 0, true;
        RETURN;
    END IF;
    SELECT min(h.base_offset) FILTER (WHERE h.created_at >= p_cutoff), max(h.base_offset) + 1
      INTO v_stop, v_end
      FROM (SELECT t.base_offset, t.created_at
              FROM lethe.txns t
             WHERE t.partition_id = p_partition
             ORDER BY t.base_offset
             LIMIT p_batch) h;
    WITH gone AS (
        DELETE FROM lethe.txns t
         WHERE t.partition_id = p_partition AND t.base_offset < coalesce(v_stop, v_end)
        RETURNING cardinality(t.hashes) AS n
    )
    SELECT count(*), coalesce(sum(n), 0) INTO v_rows, v_hashes FROM gone;
    RETURN QUERY SELECT v_hashes, v_stop IS NOT NULL OR v_rows < p_batch;
END $$;
REVOKE ALL ON FUNCTION lethe.purge_txns_step(p_partition uuid, p_cutoff timestamp with time zone, p_batch integer) FROM PUBLIC;

-- The cutoffs, read off the windows (a NULL window gives a
-- NULL cutoff).
CREATE OR REPLACE FUNCTION lethe.retention_cutoffs(p_now timestamp with time zone) RETURNS TABLE(queue_id bigint, queue_name text, retention_cutoff timestamp with time zone, completed_cutoff timestamp with time zone, evict_cutoff timestamp with time zone, txn_cutoff timestamp with time zone)
    LANGUAGE sql STABLE
    AS $$
    SELECT w.queue_id, w.queue_name,
           p_now - make_interval(secs => w.retention_seconds),
           p_now - make_interval(secs => w.completed_seconds),
           p_now - make_interval(secs => w.evict_seconds),
           p_now - make_interval(secs => w.txn_seconds)
      FROM lethe.queue_windows w
$$;
REVOKE ALL ON FUNCTION lethe.retention_cutoffs(p_now timestamp with time zone) FROM PUBLIC;

-- The retention predicate, shared by the sweep and its dry run so the two
-- cannot disagree. A segment qualifies as a whole, by its newest frame
-- (p_last_at) and, for completed retention, its last offset against the
-- partition's completed bound, MIN(committed)+1 over its cursors (NULL
-- without cursors: nothing consumed, nothing qualifies). A NULL cutoff is a
-- rule that is off. The answer names the rule, or is NULL.
CREATE OR REPLACE FUNCTION lethe.retention_rule(p_last_at timestamp with time zone, p_last_offset bigint, p_bound bigint, p_retention_cutoff timestamp with time zone, p_completed_cutoff timestamp with time zone, p_evict_cutoff timestamp with time zone) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE
        WHEN p_last_at < p_evict_cutoff THEN 'max_wait'
        WHEN p_last_at < p_completed_cutoff AND p_last_offset < p_bound THEN 'completed_retention'
        WHEN p_last_at < p_retention_cutoff THEN 'retention'
    END
$$;
REVOKE ALL ON FUNCTION lethe.retention_rule(p_last_at timestamp with time zone, p_last_offset bigint, p_bound bigint, p_retention_cutoff timestamp with time zone, p_completed_cutoff timestamp with time zone, p_evict_cutoff timestamp with time zone) FROM PUBLIC;

-- The dry run of sweep_step on one partition, with the same
-- bound.
CREATE OR REPLACE FUNCTION lethe.sweep_preview(p_partition uuid, p_retention_cutoff timestamp with time zone, p_completed_cutoff timestamp with time zone, p_evict_cutoff timestamp with time zone, p_limit integer) RETURNS TABLE(rule text, segments integer, frames bigint, bytes bigint, truncated boolean)
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    v_bound   bigint;
    v_rule    text;
    v_phase   int := 1;
    v_walked  int := 0;
    r         record;
    v_rules   text[]   := '{}';
    v_count   int[]    := '{}';
    v_bytes   bigint[] := '{}';
BEGIN
    IF p_completed_cutoff IS NOT NULL THEN
        v_bound := lethe.completed_bound(p_partition);
    END IF;
    FOR r IN SELECT s.last_offset, s.frame_count, s.byte_size, s.last_at
               FROM lethe.segments s
              WHERE s.partition_id = p_partition
              ORDER BY s.base_offset
              LIMIT p_limit
    LOOP
        v_walked := v_walked + 1;
        IF v_phase = 1 THEN
            v_rule := lethe.retention_rule(r.last_at, r.last_offset, v_bound,
                                           p_retention_cutoff, p_completed_cutoff, NULL);
            IF v_rule IS NULL THEN
                v_phase := 3;
            END IF;
        END IF;
        IF v_phase = 3 THEN
            v_rule := lethe.retention_rule(r.last_at, r.last_offset, NULL, NULL, NULL, p_evict_cutoff);
            EXIT WHEN v_rule IS NULL;
        END IF;
        v_rules := v_rules || v_rule;
        v_count := v_count || r.frame_count;
        v_bytes := v_bytes || r.byte_size::bigint;
    END LOOP;
    RETURN QUERY
    SELECT d.rule, count(*)::int, sum(d.cnt)::bigint, sum(d.bytes)::bigint, v_walked >= p_limit
      FROM unnest(v_rules, v_count, v_bytes) AS d(rule, cnt, bytes)
     GROUP BY d.rule;
END $$;
REVOKE ALL ON FUNCTION lethe.sweep_preview(p_partition uuid, p_retention_cutoff timestamp with time zone, p_completed_cutoff timestamp with time zone, p_evict_cutoff timestamp with time zone, p_limit integer) FROM PUBLIC;

-- One bounded step of the retention phase (retention and completed cutoffs)
-- or the eviction phase (evict cutoff): under the partition row lock, walk
-- the partition's segments from the head in base_offset order, stop at the
-- first that does not qualify, after p_batch segments or 2 MiB of frames,
-- write one history row per rule (with what each group lost, asked before
-- the delete), delete those segments and move the low watermark past the
-- last one. It answers one row per rule it applied (one row with a NULL
-- rule when it deleted nothing); done is true when the walk stopped short
-- of its limits: nothing more to do now.
--
-- The row lock also orders the step against a seek (which takes FOR KEY
-- SHARE on the partition before reading its target) and a cursor's
-- creation (whose foreign key takes it): the bound is read after either
-- committed, or they read the partition after the step did.
CREATE OR REPLACE FUNCTION lethe.sweep_step(p_partition uuid, p_retention_cutoff timestamp with time zone, p_completed_cutoff timestamp with time zone, p_evict_cutoff timestamp with time zone, p_batch integer, p_now timestamp with time zone) RETURNS TABLE(rule text, segments integer, frames bigint, bytes bigint, done boolean)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_queue   text;
    v_name    text;
    v_bound   bigint;
    v_rule    text;
    r         record;
    v_rules   text[]   := '{}';
    v_base    bigint[] := '{}';
    v_last    bigint[] := '{}';
    v_count   int[]    := '{}';
    v_bytes   bigint[] := '{}';
    v_n       int;
    v_budget  constant bigint := 2 * 1024 * 1024;
    v_taken   bigint := 0;
    v_full    bool := false;
BEGIN
    SELECT q.name, p.name INTO v_queue, v_name
      FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
     WHERE p.id = p_partition
       FOR UPDATE OF p;
    IF NOT FOUND THEN
        RETURN QUERY SELECT NULL::text, 0, 0::bigint, 0::bigint, true;
        RETURN;
    END IF;
    IF p_completed_cutoff IS NOT NULL THEN
        v_bound := lethe.completed_bound(p_partition);
    END IF;

    FOR r IN SELECT s.base_offset, s.last_offset, s.frame_count, s.byte_size, s.last_at
               FROM lethe.segments s
              WHERE s.partition_id = p_partition
              ORDER BY s.base_offset
              LIMIT p_batch
    LOOP
        IF v_taken >= v_budget THEN
            v_full := true;
            EXIT;
        END IF;
        v_rule := lethe.retention_rule(r.last_at, r.last_offset, v_bound,
                                       p_retention_cutoff, p_completed_cutoff, p_evict_cutoff);
        EXIT WHEN v_rule IS NULL;
        v_taken := v_taken + r.byte_size;
        v_rules := v_rules || v_rule;
        v_base  := v_base || r.base_offset;
        v_last  := v_last || r.last_offset;
        v_count := v_count || r.frame_count;
        v_bytes := v_bytes || r.byte_size::bigint;
    END LOOP;
    v_n := cardinality(v_base);
    IF v_n = 0 THEN
        RETURN QUERY SELECT NULL::text, 0, 0::bigint, 0::bigint, true;
        RETURN;
    END IF;

    INSERT INTO lethe.retention_history (executed_at, queue_name, partition_name, partition_id, rule,
                                         segments, frames, bytes, from_offset, to_offset, lost)
    SELECT p_now, v_queue, v_name, p_partition, d.rule, count(*), sum(d.cnt), sum(d.bytes),
           min(d.base), max(d.last), lethe.unread_losses(p_partition, array_agg(d.base), array_agg(d.last))
      FROM unnest(v_rules, v_base, v_last, v_count, v_bytes) AS d(rule, base, last, cnt, bytes)
     GROUP BY d.rule;

    DELETE FROM lethe.segments s WHERE s.partition_id = p_partition AND s.base_offset = ANY (v_base);
    UPDATE lethe.partitions p SET low_watermark = greatest(p.low_watermark, v_last[v_n] + 1)
     WHERE p.id = p_partition;

    RETURN QUERY
    SELECT d.rule, count(*)::int, sum(d.cnt)::bigint, sum(d.bytes)::bigint, v_n < p_batch AND NOT v_full
      FROM unnest(v_rules, v_count, v_bytes) AS d(rule, cnt, bytes)
     GROUP BY d.rule;
END $$;
REVOKE ALL ON FUNCTION lethe.sweep_step(p_partition uuid, p_retention_cutoff timestamp with time zone, p_completed_cutoff timestamp with time zone, p_evict_cutoff timestamp with time zone, p_batch integer, p_now timestamp with time zone) FROM PUBLIC;

-- What each group had not consumed of the given segments (base and last
-- offsets): the offsets at or past the one it wants next, and how many of
-- them it held leased. NULL when no group lost anything. The sweep asks
-- before it deletes, so a group's start time still finds its segments.
CREATE OR REPLACE FUNCTION lethe.unread_losses(p_partition uuid, p_base bigint[], p_last bigint[]) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
    WITH unread AS (
        SELECT g.group_name, greatest(d.base, g.next_wanted) AS lo, d.last AS hi, g.lease_from, g.lease_to
          FROM lethe.group_positions(p_partition) g
          JOIN unnest(p_base, p_last) AS d(base, last) ON d.last >= g.next_wanted
    ), per_group AS (
        SELECT u.group_name, sum(u.hi - u.lo + 1) AS frames, min(u.lo) AS lo, max(u.hi) AS hi,
               coalesce(sum(greatest(0, least(u.hi, u.lease_to) - greatest(u.lo, u.lease_from) + 1))
                        FILTER (WHERE u.lease_from IS NOT NULL), 0) AS leased
          FROM unread u
         GROUP BY u.group_name
    )
    SELECT jsonb_agg(jsonb_build_object('group', g.group_name, 'messages', g.frames,
                                        'fromOffset', g.lo, 'toOffset', g.hi, 'leased', g.leased)
                     ORDER BY g.group_name)
      FROM per_group g
$$;
REVOKE ALL ON FUNCTION lethe.unread_losses(p_partition uuid, p_base bigint[], p_last bigint[]) FROM PUBLIC;

--
-- PostgreSQL database dump complete
--

SET default_tablespace = '';

SET default_table_access_method = heap;
