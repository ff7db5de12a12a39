-- The hash sidecar's leaves span a fraction of its window, not a day.
--
-- A day leaf (050) is dropped once all of it is older than the widest
-- sidecar window (GREATEST(dedupWindowSeconds, completedRetentionSeconds,
-- 900 s) of any queue): with the 900 s default the sidecar held between
-- 15 minutes and a day and 15 minutes of hashes, and grew all day under a
-- steady load (the soak's: about 2.7 GiB a day at 600 msg/s, for 15
-- minutes that anyone needs).
--
-- A new leaf now spans lethe.sidecar_span(): the largest of 5, 10, 15, 20,
-- 30 minutes, 1, 2, 3, 4, 6, 8, 12 hours or a day that is at most half the
-- widest window, and at least 5 minutes. The retention loop drops leaves
-- past the window on every cycle (RETENTION_INTERVAL), so the sidecar holds
-- between the window and the window plus one span plus one interval of
-- hashes: 15 to 20 minutes by default, never more than 1.5 windows plus a
-- cycle, and a probe (lethe.append's dedup lookup) touches at most three
-- leaves of its window however wide it is.
--
-- Spans are aligned (every span divides a day), and a leaf is clipped to
-- the leaves around it: when the span changes (a queue's window changed),
-- leaves of the new span begin where the old ones end, never overlapping.

-- The widest sidecar window of any queue: GREATEST(dedupWindowSeconds,
-- completedRetentionSeconds, 900 s). No queue needs a hash older than this;
-- the retention loop drops sidecar leaves past it and sizes new ones by it.
CREATE FUNCTION lethe.sidecar_window() RETURNS interval
LANGUAGE sql STABLE AS $$
    SELECT make_interval(secs => greatest(coalesce(max(greatest(q.dedup_window_seconds,
                                                        q.completed_retention_seconds)), 0), 900))
      FROM lethe.queues q
$$;

-- The span of the next sidecar leaf.
CREATE FUNCTION lethe.sidecar_span() RETURNS interval
LANGUAGE sql STABLE AS $$
    SELECT coalesce(max(s.span), interval '5 minutes')
      FROM (SELECT make_interval(mins => m) AS span
              FROM unnest(ARRAY[5, 10, 15, 20, 30, 60, 120, 180, 240, 360, 480, 720, 1440]) AS m) s
     WHERE s.span <= lethe.sidecar_window() / 2
$$;

-- The leaf bounds of a tier at p_at, as in 050, except the sidecar's: the
-- span of lethe.sidecar_span() holding p_at, named by its start to the
-- second (lethe.create_leaf clips it to its neighbours and renames it).
CREATE OR REPLACE FUNCTION lethe.leaf_range(p_tier text, p_at timestamptz, OUT lo timestamptz, OUT hi timestamptz, OUT name text)
LANGUAGE sql STABLE AS $$
    SELECT b.lo, b.hi,
           CASE p_tier
               WHEN 'txns' THEN 'txns_p' || to_char(b.lo AT TIME ZONE 'UTC', 'YYYYMMDD"_"HH24MISS')
               WHEN 'forever' THEN 'segments_forever_p' || to_char(b.lo AT TIME ZONE 'UTC', 'YYYYMM')
               WHEN 'held' THEN 'segments_held_p' || to_char(b.lo AT TIME ZONE 'UTC', 'YYYYMM')
               ELSE 'segments_' || p_tier || '_p' || to_char(b.lo AT TIME ZONE 'UTC', 'YYYYMMDD')
           END
      FROM (SELECT u.t AT TIME ZONE 'UTC' AS lo, (u.t + u.span) AT TIME ZONE 'UTC' AS hi
              FROM (SELECT date_bin(s.span, p_at AT TIME ZONE 'UTC', timestamp '2000-01-01') AS t, s.span
                      FROM lethe.sidecar_span() AS s(span)
                     WHERE p_tier = 'txns'
                    UNION ALL
                    SELECT date_trunc(CASE p_tier WHEN '1w' THEN 'day'
                                                  WHEN '3w' THEN 'week' WHEN '7w' THEN 'week' ELSE 'month' END,
                                      p_at AT TIME ZONE 'UTC'),
                           CASE p_tier WHEN '1w' THEN interval '1 day'
                                       WHEN '3w' THEN interval '7 days' WHEN '7w' THEN interval '7 days'
                                       ELSE interval '1 month' END
                     WHERE p_tier <> 'txns') u) b
$$;

-- The name of the leaf of a segment tier holding p_at, for the check
-- lethe.append makes on every call; NULL for the sidecar, whose leaves'
-- bounds depend on the leaves made before: they are looked up in
-- lethe.leaves. A pure expression, so it is inlined (a subquery here would
-- keep it from being inlined: a parse and plan per append).
CREATE OR REPLACE FUNCTION lethe.leaf_name(p_tier text, p_at timestamptz) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE p_tier
               WHEN '1w' THEN 'segments_1w_p' || to_char(p_at AT TIME ZONE 'UTC', 'YYYYMMDD')
               WHEN 'txns' THEN NULL
               WHEN 'forever' THEN 'segments_forever_p' || to_char(p_at AT TIME ZONE 'UTC', 'YYYYMM')
               WHEN 'held' THEN 'segments_held_p' || to_char(p_at AT TIME ZONE 'UTC', 'YYYYMM')
               ELSE 'segments_' || p_tier || '_p'
                    || to_char(date_trunc('week', p_at AT TIME ZONE 'UTC'), 'YYYYMMDD')
           END
$$;

-- The leaf of p_tier holding p_at, created when missing: a catalog cache
-- lookup for a segment tier, a lethe.leaves probe for the sidecar.
CREATE OR REPLACE FUNCTION lethe.ensure_leaf(p_tier text, p_at timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF p_tier = 'txns' THEN
        PERFORM lethe.ensure_leaves('txns', p_at, 0);
    ELSIF to_regclass('lethe.' || lethe.leaf_name(p_tier, p_at)) IS NULL THEN
        PERFORM lethe.create_leaf(p_tier, p_at);
    END IF;
END $$;

-- lethe.create_leaf as in 053, with a sidecar leaf clipped to the leaves
-- before and after it (so spans may change) and named by its start.
CREATE OR REPLACE FUNCTION lethe.create_leaf(p_tier text, p_at timestamptz) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    r        record;
    v_parent text := CASE p_tier WHEN 'txns' THEN 'txns' ELSE 'segments_' || p_tier END;
    v_have   text;
    v_lo     timestamptz;
    v_hi     timestamptz;
    v_name   text;
BEGIN
    SELECT * INTO r FROM lethe.leaf_range(p_tier, p_at);
    v_lo := r.lo;
    v_hi := r.hi;
    v_name := r.name;
    EXECUTE format('LOCK TABLE lethe.%I IN SHARE UPDATE EXCLUSIVE MODE', v_parent);
    SELECT l.name INTO v_have FROM lethe.leaves l
     WHERE l.parent = v_parent AND l.state = 'attached' AND l.lo <= p_at AND p_at < l.hi;
    IF FOUND THEN
        RETURN v_have;
    END IF;
    IF p_tier = 'txns' THEN
        v_lo := greatest(v_lo, (SELECT max(l.hi) FROM lethe.leaves l WHERE l.parent = 'txns' AND l.hi <= p_at));
        v_hi := least(v_hi, (SELECT min(l.lo) FROM lethe.leaves l WHERE l.parent = 'txns' AND l.lo > p_at));
        v_name := 'txns_p' || to_char(v_lo AT TIME ZONE 'UTC', 'YYYYMMDD"_"HH24MISS');
    END IF;
    EXECUTE format('CREATE TABLE lethe.%I (LIKE lethe.%I INCLUDING DEFAULTS INCLUDING STORAGE INCLUDING COMPRESSION)',
                   v_name, v_parent);
    EXECUTE format('ALTER TABLE lethe.%I ADD PRIMARY KEY (partition_id, base_offset)', v_name);
    IF p_tier = 'txns' THEN
        EXECUTE format('CREATE INDEX %I ON lethe.%I USING gin (hashes) WITH (fastupdate = off)',
                       v_name || '_hashes_idx', v_name);
        EXECUTE format('ALTER TABLE lethe.%I ADD CONSTRAINT leaf_bounds CHECK (created_at >= %L AND created_at < %L)',
                       v_name, v_lo, v_hi);
    ELSE
        EXECUTE format('ALTER TABLE lethe.%I ADD CONSTRAINT leaf_bounds CHECK (tier = %L AND appended_at >= %L AND appended_at < %L)',
                       v_name, p_tier, v_lo, v_hi);
    END IF;
    EXECUTE format('ALTER TABLE lethe.%I ATTACH PARTITION lethe.%I FOR VALUES FROM (%L) TO (%L)',
                   v_parent, v_name, v_lo, v_hi);
    -- The partition constraint says the same; one check per insert is enough.
    EXECUTE format('ALTER TABLE lethe.%I DROP CONSTRAINT leaf_bounds', v_name);
    PERFORM lethe.apply_table_settings(format('lethe.%I', v_name)::regclass);
    INSERT INTO lethe.leaves (name, parent, tier, lo, hi) VALUES (v_name, v_parent, p_tier, v_lo, v_hi);
    RETURN v_name;
END $$;

-- The leaf of p_tier holding p_at and the p_ahead leaves after it, each
-- created where missing: the retention loop's way of keeping DDL off the
-- push path. Walks leaf ends, so it follows clipped and changed spans.
CREATE FUNCTION lethe.ensure_leaves(p_tier text, p_at timestamptz, p_ahead int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_parent text := CASE p_tier WHEN 'txns' THEN 'txns' ELSE 'segments_' || p_tier END;
    v_at     timestamptz := p_at;
    v_hi     timestamptz;
BEGIN
    FOR n IN 0..p_ahead LOOP
        SELECT l.hi INTO v_hi FROM lethe.leaves l
         WHERE l.parent = v_parent AND l.state = 'attached' AND l.lo <= v_at AND v_at < l.hi;
        IF NOT FOUND THEN
            PERFORM lethe.create_leaf(p_tier, v_at);
            SELECT l.hi INTO STRICT v_hi FROM lethe.leaves l
             WHERE l.parent = v_parent AND l.state = 'attached' AND l.lo <= v_at AND v_at < l.hi;
        END IF;
        v_at := v_hi;
    END LOOP;
END $$;

-- lethe.append as in 050, but for how it finds its sidecar leaf: an index
-- probe of lethe.leaves through the function's cached plan.
CREATE OR REPLACE FUNCTION lethe.append(
    p_partition uuid,
    p_hashes    bigint[],
    p_lens      int[],
    p_blob      bytea,
    p_first_at  timestamptz,
    p_last_at   timestamptz,
    p_now       timestamptz,
    OUT base_offset bigint,
    OUT dup_idx     int[],
    OUT dup_offsets bigint[]
) LANGUAGE plpgsql
SET enable_seqscan = off
AS $$
DECLARE
    v_next   bigint;
    v_total  int := cardinality(p_hashes);
    v_new    int;
    v_fresh  int[];
    v_hashes bigint[];
    v_keep   bytea;
    v_hits   bigint;
    v_tier   text;
    v_at     timestamptz;
    v_since  timestamptz;
BEGIN
    SELECT p.next_offset, q.retention_tier, greatest(p_now, coalesce(p.last_push_at, p_now)),
           p_now - make_interval(secs => greatest(q.dedup_window_seconds, q.completed_retention_seconds, 900))
      INTO v_next, v_tier, v_at, v_since
      FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
     WHERE p.id = p_partition
       FOR UPDATE OF p;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'partition % does not exist', p_partition USING ERRCODE = 'P0002';
    END IF;
    IF to_regclass('lethe.' || lethe.leaf_name(v_tier, v_at)) IS NULL THEN
        PERFORM lethe.create_leaf(v_tier, v_at);
    END IF;
    -- The sidecar leaf holding p_now, looked up (its bounds depend on the
    -- leaves made before, migration 130): an index probe of lethe.leaves
    -- through this function's cached plan.
    PERFORM 1 FROM lethe.leaves l
     WHERE l.parent = 'txns' AND l.state = 'attached' AND l.lo <= p_now AND p_now < l.hi;
    IF NOT FOUND THEN
        PERFORM lethe.create_leaf('txns', p_now);
    END IF;
    dup_idx := '{}';
    dup_offsets := '{}';

    -- Through the GIN index, one probe per hash (see 003 for the plans to
    -- avoid), in the leaves of the window only.
    SELECT count(*) INTO v_hits
      FROM lethe.txns t
     WHERE t.hashes && p_hashes AND t.partition_id IS NOT DISTINCT FROM p_partition
       AND t.created_at >= v_since;
    IF v_hits = 0 THEN
        INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count,
                                    first_at, last_at, byte_size, frames, tier, appended_at)
        VALUES (p_partition, v_next, v_next + v_total - 1, v_total,
                p_first_at, p_last_at, length(p_blob), p_blob, v_tier, v_at);
        INSERT INTO lethe.txns (partition_id, base_offset, created_at, hashes)
        VALUES (p_partition, v_next, p_now, p_hashes);
        UPDATE lethe.partitions SET next_offset = v_next + v_total, last_push_at = v_at
         WHERE id = p_partition;
        base_offset := v_next;
        RETURN;
    END IF;

    SELECT coalesce(array_agg(d.i ORDER BY d.i), '{}'), coalesce(array_agg(d.off ORDER BY d.i), '{}')
      INTO dup_idx, dup_offsets
      FROM (SELECT DISTINCT ON (u.i) u.i::int AS i,
                   t.base_offset + array_position(t.hashes, u.h) - 1 AS off
              FROM unnest(p_hashes) WITH ORDINALITY AS u(h, i)
              JOIN lethe.txns t ON t.hashes @> ARRAY[u.h] AND t.partition_id IS NOT DISTINCT FROM p_partition
                               AND t.created_at >= v_since
             ORDER BY u.i, t.base_offset) d;
    v_new := v_total - cardinality(dup_idx);
    IF v_new = 0 THEN
        base_offset := NULL;
        RETURN;
    END IF;

    SELECT array_agg(u.i::int ORDER BY u.i), array_agg(u.h ORDER BY u.i) INTO v_fresh, v_hashes
      FROM unnest(p_hashes) WITH ORDINALITY AS u(h, i)
     WHERE NOT (u.i::int = ANY (dup_idx));
    SELECT string_agg(substring(p_blob FROM s.pos FOR s.len), ''::bytea ORDER BY s.i) INTO v_keep
      FROM (SELECT u.i::int AS i, u.len, (sum(u.len) OVER (ORDER BY u.i) - u.len + 1)::int AS pos
              FROM unnest(p_lens) WITH ORDINALITY AS u(len, i)) s
     WHERE s.i = ANY (v_fresh);

    INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count,
                                first_at, last_at, byte_size, frames, tier, appended_at)
    VALUES (p_partition, v_next, v_next + v_new - 1, v_new,
            p_first_at, p_last_at, length(v_keep), v_keep, v_tier, v_at);
    INSERT INTO lethe.txns (partition_id, base_offset, created_at, hashes)
    VALUES (p_partition, v_next, p_now, v_hashes);
    UPDATE lethe.partitions SET next_offset = v_next + v_new, last_push_at = v_at
     WHERE id = p_partition;
    base_offset := v_next;
END $$;

REVOKE ALL ON FUNCTION lethe.sidecar_window() FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.sidecar_span() FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.ensure_leaves(text, timestamptz, int) FROM PUBLIC;
