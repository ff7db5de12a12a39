-- Completed retention counts every subscribed consumer group, and only the
-- rules that may lose unread data can record a loss.
--
-- 010 bounded completed retention by MIN(committed)+1 over a partition's
-- cursors, so a group subscribed to the queue but without a cursor on the
-- partition (offline, or the partition is new) was ignored and another
-- group's progress deleted its data. Here one definition of where each
-- group stands (lethe.group_positions) feeds the bound the sweep, its dry
-- run and the work list use (lethe.completed_bound) and the loss accounting
-- (lethe.unread_losses).

-- Where every consumer group of the partition's queue stands on it: the
-- first offset it still wants. A group with a cursor wants committed + 1;
-- a group subscribed to the queue without a cursor here wants everything
-- from its subscription start: from the first offset when it subscribed in
-- mode all, else from the first segment whose newest frame is at or after
-- its start time (segments wholly before it are not owed; the partition's
-- next offset when every retained segment is). lease_from/lease_to are a
-- live lease's range, for counting what was leased.
CREATE FUNCTION lethe.group_positions(p_partition uuid)
RETURNS TABLE (group_name text, next_wanted bigint, lease_from bigint, lease_to bigint)
LANGUAGE sql STABLE AS $$
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
$$;

-- The consumed bound of a partition: the lowest offset any group still
-- wants. Completed retention deletes only segments wholly below it. NULL
-- when no group is subscribed and none has a cursor: nothing is consumed.
CREATE FUNCTION lethe.completed_bound(p_partition uuid) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT min(g.next_wanted) FROM lethe.group_positions(p_partition) g
$$;

-- What each group had not consumed of the given segments (base and last
-- offsets): the offsets at or past the one it wants next, and how many of
-- them it held leased. NULL when no group lost anything. The sweep asks
-- before it deletes, so a group's start time still finds its segments.
CREATE FUNCTION lethe.unread_losses(p_partition uuid, p_base bigint[], p_last bigint[]) RETURNS jsonb
LANGUAGE sql STABLE AS $$
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

-- Only retentionSeconds and maxWaitTimeSeconds may delete unread data. A
-- history row of another rule that names a loss fails, and with it the
-- step that would have deleted: the loss never commits. (Rows written by
-- 010's sweep are not checked: it could record such losses.)
ALTER TABLE lethe.retention_history
    ADD CONSTRAINT retention_history_only_time_rules_lose
    CHECK (lost IS NULL OR rule IN ('retention', 'max_wait')) NOT VALID;

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
CREATE OR REPLACE FUNCTION lethe.sweep_step(
    p_partition        uuid,
    p_retention_cutoff timestamptz,
    p_completed_cutoff timestamptz,
    p_evict_cutoff     timestamptz,
    p_batch            int,
    p_now              timestamptz
) RETURNS TABLE (rule text, segments int, frames bigint, bytes bigint, done bool)
LANGUAGE plpgsql AS $$
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

-- The dry run of sweep_step on one partition (see 010), with the same
-- bound.
CREATE OR REPLACE FUNCTION lethe.sweep_preview(
    p_partition        uuid,
    p_retention_cutoff timestamptz,
    p_completed_cutoff timestamptz,
    p_evict_cutoff     timestamptz,
    p_limit            int
) RETURNS TABLE (rule text, segments int, frames bigint, bytes bigint, truncated bool)
LANGUAGE plpgsql STABLE AS $$
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

-- One bounded step of the hash-sidecar purge, linear in its batch: under
-- the partition row lock, read the first p_batch sidecar rows from the
-- head once, find the first still inside the window, and delete the rows
-- before it by a range of the primary key. Rows are written in offset
-- order with the clock moving forward, so nothing past that row is purged
-- (010's version compared every pair of the batch). purged counts hashes.
CREATE OR REPLACE FUNCTION lethe.purge_txns_step(
    p_partition uuid,
    p_cutoff    timestamptz,
    p_batch     int
) RETURNS TABLE (purged int, done bool)
LANGUAGE plpgsql AS $$
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

DROP FUNCTION lethe.retention_losses(uuid, bigint[], bigint[], timestamptz[]);

REVOKE ALL ON FUNCTION lethe.group_positions(uuid) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.completed_bound(uuid) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.unread_losses(uuid, bigint[], bigint[]) FROM PUBLIC;
