-- Applies lethe's settings to p_table: to the table itself, or, for a
-- partitioned table, to every leaf partition under it. Answers how many
-- tables it altered (0 for a table lethe leaves at the defaults).
CREATE OR REPLACE FUNCTION lethe.apply_table_settings(p_table regclass) RETURNS integer
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_root     regclass := coalesce(pg_catalog.pg_partition_root(p_table), p_table);
    v_schema   text;
    v_name     text;
    v_settings text;
    v_leaf     regclass;
    v_n        int := 0;
BEGIN
    SELECT n.nspname, c.relname INTO v_schema, v_name
      FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = v_root;
    v_settings := lethe.table_settings(v_schema, v_name);
    IF v_settings IS NULL THEN
        RETURN 0;
    END IF;
    -- pg_partition_tree lists a plain table as nothing, a partitioned one
    -- as itself and everything under it.
    FOR v_leaf IN
        SELECT p_table WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_partition_tree(p_table))
        UNION ALL
        SELECT t.relid FROM pg_catalog.pg_partition_tree(p_table) t WHERE t.isleaf
    LOOP
        EXECUTE format('ALTER TABLE %s SET (%s)', v_leaf, v_settings);
        v_n := v_n + 1;
    END LOOP;
    RETURN v_n;
END $$;
REVOKE ALL ON FUNCTION lethe.apply_table_settings(p_table regclass) FROM PUBLIC;

-- lethe.create_leaf, with a sidecar leaf clipped to the leaves
-- before and after it (so spans may change) and named by its start.
CREATE OR REPLACE FUNCTION lethe.create_leaf(p_tier text, p_at timestamp with time zone) RETURNS text
    LANGUAGE plpgsql
    AS $$
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
REVOKE ALL ON FUNCTION lethe.create_leaf(p_tier text, p_at timestamp with time zone) FROM PUBLIC;

-- The leaf of p_tier holding p_at, created when missing: a catalog cache
-- lookup for a segment tier, a lethe.leaves probe for the sidecar.
CREATE OR REPLACE FUNCTION lethe.ensure_leaf(p_tier text, p_at timestamp with time zone) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF p_tier = 'txns' THEN
        PERFORM lethe.ensure_leaves('txns', p_at, 0);
    ELSIF to_regclass('lethe.' || lethe.leaf_name(p_tier, p_at)) IS NULL THEN
        PERFORM lethe.create_leaf(p_tier, p_at);
    END IF;
END $$;
REVOKE ALL ON FUNCTION lethe.ensure_leaf(p_tier text, p_at timestamp with time zone) FROM PUBLIC;

-- The leaf of p_tier holding p_at and the p_ahead leaves after it, each
-- created where missing: the retention loop's way of keeping DDL off the
-- push path. Walks leaf ends, so it follows clipped and changed spans.
CREATE OR REPLACE FUNCTION lethe.ensure_leaves(p_tier text, p_at timestamp with time zone, p_ahead integer) RETURNS void
    LANGUAGE plpgsql
    AS $$
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
REVOKE ALL ON FUNCTION lethe.ensure_leaves(p_tier text, p_at timestamp with time zone, p_ahead integer) FROM PUBLIC;

-- The name of the leaf of a segment tier holding p_at, for the check
-- lethe.append makes on every call; NULL for the sidecar, whose leaves'
-- bounds depend on the leaves made before: they are looked up in
-- lethe.leaves. A pure expression, so it is inlined (a subquery here would
-- keep it from being inlined: a parse and plan per append).
CREATE OR REPLACE FUNCTION lethe.leaf_name(p_tier text, p_at timestamp with time zone) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE p_tier
               WHEN '1w' THEN 'segments_1w_p' || to_char(p_at AT TIME ZONE 'UTC', 'YYYYMMDD')
               WHEN 'txns' THEN NULL
               WHEN 'forever' THEN 'segments_forever_p' || to_char(p_at AT TIME ZONE 'UTC', 'YYYYMM')
               WHEN 'held' THEN 'segments_held_p' || to_char(p_at AT TIME ZONE 'UTC', 'YYYYMM')
               ELSE 'segments_' || p_tier || '_p'
                    || to_char(date_trunc('week', p_at AT TIME ZONE 'UTC'), 'YYYYMMDD')
           END
$$;
REVOKE ALL ON FUNCTION lethe.leaf_name(p_tier text, p_at timestamp with time zone) FROM PUBLIC;

-- Whether a held leaf still holds a frame some group wants.
CREATE OR REPLACE FUNCTION lethe.leaf_pending(p_leaf text) RETURNS boolean
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    v bool;
BEGIN
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM (SELECT s.partition_id, max(s.last_offset) AS m
                                                    FROM lethe.%I s GROUP BY s.partition_id) x
                                    WHERE x.m >= lethe.completed_bound(x.partition_id))', p_leaf) INTO v;
    RETURN v;
END $$;
REVOKE ALL ON FUNCTION lethe.leaf_pending(p_leaf text) FROM PUBLIC;

-- The leaf bounds of a tier at p_at, except the sidecar's: the
-- span of lethe.sidecar_span() holding p_at, named by its start to the
-- second (lethe.create_leaf clips it to its neighbours and renames it).
CREATE OR REPLACE FUNCTION lethe.leaf_range(p_tier text, p_at timestamp with time zone, OUT lo timestamp with time zone, OUT hi timestamp with time zone, OUT name text) RETURNS record
    LANGUAGE sql STABLE
    AS $$
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
REVOKE ALL ON FUNCTION lethe.leaf_range(p_tier text, p_at timestamp with time zone, OUT lo timestamp with time zone, OUT hi timestamp with time zone, OUT name text) FROM PUBLIC;

-- The end of the leaf of segment tier p_tier ('1w', '3w', '7w', 'forever'
-- or 'held') holding p_at: lethe.leaf_range's hi, as one expression.
CREATE OR REPLACE FUNCTION lethe.segment_leaf_hi(p_tier text, p_at timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT (date_trunc(CASE p_tier WHEN '1w' THEN 'day' WHEN '3w' THEN 'week' WHEN '7w' THEN 'week' ELSE 'month' END,
                       p_at AT TIME ZONE 'UTC')
            + CASE p_tier WHEN '1w' THEN interval '1 day' WHEN '3w' THEN interval '7 days'
                          WHEN '7w' THEN interval '7 days' ELSE interval '1 month' END) AT TIME ZONE 'UTC'
$$;
REVOKE ALL ON FUNCTION lethe.segment_leaf_hi(p_tier text, p_at timestamp with time zone) FROM PUBLIC;

-- The span of the next sidecar leaf.
CREATE OR REPLACE FUNCTION lethe.sidecar_span() RETURNS interval
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce(max(s.span), interval '5 minutes')
      FROM (SELECT make_interval(mins => m) AS span
              FROM unnest(ARRAY[5, 10, 15, 20, 30, 60, 120, 180, 240, 360, 480, 720, 1440]) AS m) s
     WHERE s.span <= lethe.sidecar_window() / 2
$$;
REVOKE ALL ON FUNCTION lethe.sidecar_span() FROM PUBLIC;

-- The widest sidecar window of any queue: GREATEST(dedupWindowSeconds,
-- completedRetentionSeconds, 900 s). No queue needs a hash older than this;
-- the retention loop drops sidecar leaves past it and sizes new ones by it.
CREATE OR REPLACE FUNCTION lethe.sidecar_window() RETURNS interval
    LANGUAGE sql STABLE
    AS $$
    SELECT make_interval(secs => greatest(coalesce(max(greatest(q.dedup_window_seconds,
                                                        q.completed_retention_seconds)), 0), 900))
      FROM lethe.queues q
$$;
REVOKE ALL ON FUNCTION lethe.sidecar_window() FROM PUBLIC;

-- The settings of one table, by the name of the root of its partition tree
-- in schema lethe; NULL for a table lethe leaves at the server's defaults.
-- A table with no TOAST table ignores the toast.* ones.
CREATE OR REPLACE FUNCTION lethe.table_settings(p_root_schema text, p_root_name text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE WHEN p_root_schema <> 'lethe' THEN NULL
        -- Appended at the tail, deleted from the head by retention: vacuum
        -- once 5% of the rows are dead, so the space of deleted segments is
        -- reused by the next ones instead of growing the files (the default
        -- 20% lets a fifth of the window pile up as dead rows). The frames
        -- live in the TOAST table, which is vacuumed on its own counters.
        WHEN p_root_name = 'segments' THEN
            'autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_threshold = 500, '
            'toast.autovacuum_vacuum_scale_factor = 0.05, toast.autovacuum_vacuum_threshold = 500'
        -- The hash sidecar: one row per segment, purged from the head. Its
        -- GIN index frees an entry only when vacuum removes it, and the
        -- hashes are random keys spread over the whole index, so vacuum
        -- early (2%) for freed entries to be reused before new pages split.
        WHEN p_root_name = 'txns' THEN
            'autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 500, '
            'toast.autovacuum_vacuum_scale_factor = 0.05, toast.autovacuum_vacuum_threshold = 500'
        -- A few rows (partitions x groups), each updated by every pop and
        -- ack: vacuum as soon as 100 rows are dead, without cost-based
        -- pauses (the table is a few pages). fillfactor leaves room on each
        -- page for a new version next to the old one (a HOT update), which
        -- pays off once no indexed column changes on pop and ack.
        WHEN p_root_name = 'cursors' THEN
            'fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 100, '
            'autovacuum_vacuum_cost_delay = 0, '
            'toast.autovacuum_vacuum_scale_factor = 0, toast.autovacuum_vacuum_threshold = 100'
        -- One row per partition, updated by every append (next_offset,
        -- last_push_at: not indexed, so HOT): same as cursors.
        WHEN p_root_name = 'partitions' THEN
            'fillfactor = 70, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 100, '
            'autovacuum_vacuum_cost_delay = 0'
        -- Insert-only audit, deleted a day at a time by the metrics purge
        -- (1/90 of the table with METRICS_RETENTION_DAYS at 90): at the
        -- default 20% the dead days would pile up for 18 days before a
        -- vacuum makes their space reusable; at 1% each purged day is.
        WHEN p_root_name IN ('retention_history', 'retention_runs') THEN
            'autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000'
    END
$$;
REVOKE ALL ON FUNCTION lethe.table_settings(p_root_schema text, p_root_name text) FROM PUBLIC;

-- Whether tier p_tier still keeps data appended at p_at.
CREATE OR REPLACE FUNCTION lethe.tier_keeps(p_tier text, p_at timestamp with time zone, p_now timestamp with time zone) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT p_tier = 'forever' OR lethe.segment_leaf_hi(p_tier, p_at) > p_now - lethe.tier_window(p_tier)
$$;
REVOKE ALL ON FUNCTION lethe.tier_keeps(p_tier text, p_at timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;

-- Tiers in order of the window they keep.
CREATE OR REPLACE FUNCTION lethe.tier_rank(p_tier text) RETURNS integer
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE p_tier WHEN '1w' THEN 1 WHEN '3w' THEN 2 WHEN '7w' THEN 3 WHEN 'forever' THEN 4 END
$$;
REVOKE ALL ON FUNCTION lethe.tier_rank(p_tier text) FROM PUBLIC;

-- How long a tier keeps a leaf after its range ends; NULL: forever.
CREATE OR REPLACE FUNCTION lethe.tier_window(p_tier text) RETURNS interval
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE p_tier WHEN '1w' THEN interval '7 days' WHEN '3w' THEN interval '21 days'
                       WHEN '7w' THEN interval '49 days' END
$$;
REVOKE ALL ON FUNCTION lethe.tier_window(p_tier text) FROM PUBLIC;
