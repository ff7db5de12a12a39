-- The retention engine (internal/retention): its audit tables and the
-- bounded step functions the maintenance loop calls. Every step takes
-- exactly one partition row lock (the one lethe.append takes), holds it for
-- at most p_batch rows and commits, so pushes interleave with a long sweep
-- and no step can deadlock against a writer of several partitions.

-- One row per deleting step and rule: what went, from which partition, and
-- (for data nobody had consumed) what each consumer group lost unread.
-- Aged out by the metrics purge (METRICS_RETENTION_DAYS).
CREATE TABLE lethe.retention_history (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    executed_at    timestamptz NOT NULL,
    queue_name     text   NOT NULL,
    partition_name text   NOT NULL,
    partition_id   uuid   NOT NULL,
    rule           text   NOT NULL CHECK (rule IN ('retention', 'completed_retention', 'max_wait', 'partition_cleanup')),
    segments       int    NOT NULL,
    frames         bigint NOT NULL,
    bytes          bigint NOT NULL,
    from_offset    bigint,
    to_offset      bigint,
    -- [{"group", "messages", "fromOffset", "toOffset", "leased"}] or NULL.
    lost           jsonb
);
CREATE INDEX retention_history_time_idx ON lethe.retention_history (executed_at);
CREATE INDEX retention_history_queue_time_idx ON lethe.retention_history (queue_name, executed_at);

-- One row per cycle that deleted something or failed: the cycle's log line,
-- kept. Aged out by the metrics purge.
CREATE TABLE lethe.retention_runs (
    id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    started_at            timestamptz NOT NULL,
    elapsed_ms            bigint NOT NULL,
    queues                int    NOT NULL,
    segments_deleted      bigint NOT NULL,
    frames_deleted        bigint NOT NULL,
    bytes_deleted         bigint NOT NULL,
    txns_purged           bigint NOT NULL,
    max_wait_evicted      bigint NOT NULL,
    partitions_deleted    int    NOT NULL,
    subscriptions_deleted int    NOT NULL,
    metrics_purged        bigint NOT NULL,
    error                 text
);
CREATE INDEX retention_runs_time_idx ON lethe.retention_runs (started_at);

-- Every queue's cutoffs at p_now, the one definition the sweep, its dry run
-- and the status share. NULL is a rule that is off: both retention rules
-- need retention_enabled and a positive window; eviction needs only its
-- window. Transaction-id hashes are kept GREATEST(dedupWindowSeconds,
-- completedRetentionSeconds, 900 s), whatever else is configured.
CREATE FUNCTION lethe.retention_cutoffs(p_now timestamptz)
RETURNS TABLE (queue_id bigint, queue_name text, retention_cutoff timestamptz,
               completed_cutoff timestamptz, evict_cutoff timestamptz, txn_cutoff timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT q.id, q.name,
           CASE WHEN q.retention_enabled AND q.retention_seconds > 0
                THEN p_now - make_interval(secs => q.retention_seconds) END,
           CASE WHEN q.retention_enabled AND q.completed_retention_seconds > 0
                THEN p_now - make_interval(secs => q.completed_retention_seconds) END,
           CASE WHEN q.max_wait_time_seconds > 0
                THEN p_now - make_interval(secs => q.max_wait_time_seconds) END,
           p_now - make_interval(secs => greatest(q.dedup_window_seconds, q.completed_retention_seconds, 900))
      FROM lethe.queues q
$$;

-- The retention predicate, shared by the sweep and its dry run so the two
-- cannot disagree. A segment qualifies as a whole, by its newest frame
-- (p_last_at) and, for completed retention, its last offset against the
-- partition's completed bound, MIN(committed)+1 over its cursors (NULL
-- without cursors: nothing consumed, nothing qualifies). A NULL cutoff is a
-- rule that is off. The answer names the rule, or is NULL.
CREATE FUNCTION lethe.retention_rule(
    p_last_at          timestamptz,
    p_last_offset      bigint,
    p_bound            bigint,
    p_retention_cutoff timestamptz,
    p_completed_cutoff timestamptz,
    p_evict_cutoff     timestamptz
) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN p_last_at < p_evict_cutoff THEN 'max_wait'
        WHEN p_last_at < p_completed_cutoff AND p_last_offset < p_bound THEN 'completed_retention'
        WHEN p_last_at < p_retention_cutoff THEN 'retention'
    END
$$;

-- What each consumer group had not consumed of the given segments (base,
-- last offset, newest frame time): offsets past its committed cursor, and
-- how many of them it held leased. A group subscribed to the queue that
-- never read this partition counts as committed -1, limited to segments
-- newer than its subscription start. NULL when nobody lost anything.
CREATE FUNCTION lethe.retention_losses(
    p_partition uuid,
    p_base      bigint[],
    p_last      bigint[],
    p_last_at   timestamptz[]
) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    WITH groups AS (
        SELECT c.group_name, c.committed,
               CASE WHEN c.lease_id IS NOT NULL THEN c.lease_from END AS lease_from,
               c.lease_to, NULL::timestamptz AS from_at
          FROM lethe.cursors c
         WHERE c.partition_id = p_partition
        UNION ALL
        SELECT s.group_name, -1, NULL, NULL, s.from_at
          FROM lethe.subscriptions s
          JOIN lethe.partitions p ON p.queue_id = s.queue_id
         WHERE p.id = p_partition
           AND NOT EXISTS (SELECT 1 FROM lethe.cursors c
                            WHERE c.partition_id = p_partition AND c.group_name = s.group_name)
    ), unread AS (
        SELECT g.group_name, greatest(d.base, g.committed + 1) AS lo, d.last AS hi, g.lease_from, g.lease_to
          FROM groups g
          JOIN unnest(p_base, p_last, p_last_at) AS d(base, last, last_at)
            ON d.last > g.committed AND (g.from_at IS NULL OR d.last_at >= g.from_at)
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

-- One bounded step of the retention phase (retention and completed cutoffs)
-- or the eviction phase (evict cutoff): under the partition row lock, walk
-- the partition's segments from the head in base_offset order, stop at the
-- first that does not qualify or after p_batch, delete those, move the low
-- watermark past the last one and write one history row per rule. It
-- answers one row per rule it applied (one row with a NULL rule when it
-- deleted nothing); done is true when the walk stopped short of p_batch:
-- nothing more to do now.
CREATE FUNCTION lethe.sweep_step(
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
    v_rules   text[]        := '{}';
    v_base    bigint[]      := '{}';
    v_last    bigint[]      := '{}';
    v_count   int[]         := '{}';
    v_bytes   bigint[]      := '{}';
    v_last_at timestamptz[] := '{}';
    v_n       int;
    -- A step also stops at this many bytes of frames, so its lock hold and
    -- its burst of WAL stay short whatever the segments' size (a thousand
    -- segments of a thousand 1 KiB frames would be a gigabyte in one step).
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
        SELECT min(c.committed) + 1 INTO v_bound FROM lethe.cursors c WHERE c.partition_id = p_partition;
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
        v_taken   := v_taken + r.byte_size;
        v_rules   := v_rules || v_rule;
        v_base    := v_base || r.base_offset;
        v_last    := v_last || r.last_offset;
        v_count   := v_count || r.frame_count;
        v_bytes   := v_bytes || r.byte_size::bigint;
        v_last_at := v_last_at || r.last_at;
    END LOOP;
    v_n := cardinality(v_base);
    IF v_n = 0 THEN
        RETURN QUERY SELECT NULL::text, 0, 0::bigint, 0::bigint, true;
        RETURN;
    END IF;

    DELETE FROM lethe.segments s WHERE s.partition_id = p_partition AND s.base_offset = ANY (v_base);
    UPDATE lethe.partitions p SET low_watermark = greatest(p.low_watermark, v_last[v_n] + 1)
     WHERE p.id = p_partition;

    INSERT INTO lethe.retention_history (executed_at, queue_name, partition_name, partition_id, rule,
                                         segments, frames, bytes, from_offset, to_offset, lost)
    SELECT p_now, v_queue, v_name, p_partition, d.rule, count(*), sum(d.cnt), sum(d.bytes),
           min(d.base), max(d.last),
           lethe.retention_losses(p_partition, array_agg(d.base), array_agg(d.last), array_agg(d.last_at))
      FROM unnest(v_rules, v_base, v_last, v_count, v_bytes, v_last_at) AS d(rule, base, last, cnt, bytes, last_at)
     GROUP BY d.rule;

    RETURN QUERY
    SELECT d.rule, count(*)::int, sum(d.cnt)::bigint, sum(d.bytes)::bigint, v_n < p_batch AND NOT v_full
      FROM unnest(v_rules, v_count, v_bytes) AS d(rule, cnt, bytes)
     GROUP BY d.rule;
END $$;

-- What the next cycle's retention and eviction phases would delete from one
-- partition, without deleting: the same walk as sweep_step, the retention
-- rules first and then, from where they stop, the eviction rule. At most
-- p_limit segments are walked; truncated says the walk hit that limit.
CREATE FUNCTION lethe.sweep_preview(
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
        SELECT min(c.committed) + 1 INTO v_bound FROM lethe.cursors c WHERE c.partition_id = p_partition;
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

-- One bounded step of the hash-sidecar purge: under the partition row lock
-- (lethe.append reads the sidecar under it), delete up to p_batch sidecar
-- rows (one per segment) stored before p_cutoff, from the partition's head
-- in primary-key order: rows are written in offset order with the clock
-- moving forward, so the walk stops at the first row still inside the
-- window. purged counts hashes.
CREATE FUNCTION lethe.purge_txns_step(
    p_partition uuid,
    p_cutoff    timestamptz,
    p_batch     int
) RETURNS TABLE (purged int, done bool)
LANGUAGE plpgsql AS $$
DECLARE
    v_rows   int;
    v_hashes int;
BEGIN
    PERFORM 1 FROM lethe.partitions p WHERE p.id = p_partition FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 0, true;
        RETURN;
    END IF;
    WITH head AS (
        SELECT t.base_offset, t.created_at
          FROM lethe.txns t
         WHERE t.partition_id = p_partition
         ORDER BY t.base_offset
         LIMIT p_batch
    ), doomed AS (
        SELECT h.base_offset FROM head h
         WHERE h.created_at < p_cutoff
           AND NOT EXISTS (SELECT 1 FROM head h2
                            WHERE h2.base_offset < h.base_offset AND h2.created_at >= p_cutoff)
    ), gone AS (
        DELETE FROM lethe.txns t USING doomed d
         WHERE t.partition_id = p_partition AND t.base_offset = d.base_offset
        RETURNING cardinality(t.hashes) AS n
    )
    SELECT count(*), coalesce(sum(n), 0) INTO v_rows, v_hashes FROM gone;
    RETURN QUERY SELECT v_hashes, v_rows < p_batch;
END $$;

-- Whether a partition may be deleted: empty (no segments: next_offset =
-- low_watermark), no push and no cursor change since p_idle_before, no dead
-- letter (they pin it), no hash still inside its window (the purge ran
-- first, so any hash left is one) and no lease. The cleanup's candidate
-- query, its recheck under the lock and the dry run all ask this.
CREATE FUNCTION lethe.partition_reclaimable(p_partition uuid, p_idle_before timestamptz)
RETURNS bool
LANGUAGE sql STABLE AS $$
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

-- Deletes one reclaimable partition (with its cursors), checking again
-- under the partition row lock; a cursor row another session holds makes it
-- skip rather than wait. Answers the queue name when it deleted.
CREATE FUNCTION lethe.cleanup_partition(
    p_partition   uuid,
    p_idle_before timestamptz,
    p_now         timestamptz
) RETURNS text
LANGUAGE plpgsql AS $$
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

REVOKE ALL ON FUNCTION lethe.retention_cutoffs(timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.retention_rule(timestamptz, bigint, bigint, timestamptz, timestamptz, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.retention_losses(uuid, bigint[], bigint[], timestamptz[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.sweep_step(uuid, timestamptz, timestamptz, timestamptz, int, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.sweep_preview(uuid, timestamptz, timestamptz, timestamptz, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.purge_txns_step(uuid, timestamptz, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.partition_reclaimable(uuid, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.cleanup_partition(uuid, timestamptz, timestamptz) FROM PUBLIC;
REVOKE ALL ON lethe.retention_history, lethe.retention_runs FROM PUBLIC;
