-- The hash sidecar's leaves span a fraction of its window, not a day.
--
-- A day leaf (050) is dropped once all of it is older than the widest
-- sidecar window (GREATEST(dedupWindowSeconds, completedRetentionSeconds,
-- 900 s) of any queue): with the 900 s default the sidecar held between
-- 15 minutes and a day and 15 minutes of hashes, and grew all day under a
-- steady load (issue 12's soak: about 2.7 GiB a day at 600 msg/s, for 15
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

-- The span of the next sidecar leaf.
CREATE FUNCTION lethe.sidecar_span() RETURNS interval
LANGUAGE sql STABLE AS $$
    SELECT coalesce(max(s.span), interval '5 minutes')
      FROM (SELECT make_interval(mins => m) AS span
              FROM unnest(ARRAY[5, 10, 15, 20, 30, 60, 120, 180, 240, 360, 480, 720, 1440]) AS m) s
     WHERE s.span <= (SELECT make_interval(secs => greatest(coalesce(max(greatest(q.dedup_window_seconds,
                                                 q.completed_retention_seconds)), 0), 900) / 2.0)
                        FROM lethe.queues q)
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

-- The name of the leaf holding p_at, for the check lethe.append makes on
-- every call: computed for the segment tiers, looked up for the sidecar
-- (whose bounds depend on the leaves made before), 'txns_none' when no
-- sidecar leaf holds p_at.
CREATE OR REPLACE FUNCTION lethe.leaf_name(p_tier text, p_at timestamptz) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE p_tier
               WHEN '1w' THEN 'segments_1w_p' || to_char(p_at AT TIME ZONE 'UTC', 'YYYYMMDD')
               WHEN 'txns' THEN coalesce((SELECT l.name FROM lethe.leaves l
                                           WHERE l.parent = 'txns' AND l.state = 'attached'
                                             AND l.lo <= p_at AND p_at < l.hi), 'txns_none')
               WHEN 'forever' THEN 'segments_forever_p' || to_char(p_at AT TIME ZONE 'UTC', 'YYYYMM')
               WHEN 'held' THEN 'segments_held_p' || to_char(p_at AT TIME ZONE 'UTC', 'YYYYMM')
               ELSE 'segments_' || p_tier || '_p'
                    || to_char(date_trunc('week', p_at AT TIME ZONE 'UTC'), 'YYYYMMDD')
           END
$$;

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

REVOKE ALL ON FUNCTION lethe.sidecar_span() FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.ensure_leaves(text, timestamptz, int) FROM PUBLIC;
