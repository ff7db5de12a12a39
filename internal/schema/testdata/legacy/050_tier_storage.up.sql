-- Retention tiers: lethe.segments becomes partitioned by tier
-- and, within a tier, by the time of the append that wrote the segment;
-- lethe.txns (the hash sidecar) is partitioned by day. Old data is dropped
-- as whole leaves (DETACH ... CONCURRENTLY, then DROP), which costs the same
-- however many messages a leaf holds. docs/ARCHITECTURE.md has the design.
--
-- Each leaf has its own primary key (partition_id, base_offset): offsets
-- are allocated under the partition row lock, so they are unique per
-- partition although no index spans the leaves. The parents have no index,
-- so attaching a leaf builds nothing on them.

-- A queue's tier: 1w (day leaves, dropped 7 days after their day), 3w and
-- 7w (week leaves, 21 and 49 days), or forever (month leaves never dropped
-- by a tier). quarantined says what a tier drop does with the queue's dead
-- letters. required_groups are consumer groups owed the queue's data
-- before they ever connect (lethe.group_positions counts them).
ALTER TABLE lethe.queues
    ADD COLUMN retention_tier  text   NOT NULL DEFAULT 'forever'
        CHECK (retention_tier IN ('1w', '3w', '7w', 'forever')),
    ADD COLUMN quarantined     text   NOT NULL DEFAULT 'keep' CHECK (quarantined IN ('keep', 'purge')),
    ADD COLUMN required_groups text[] NOT NULL DEFAULT '{}';

-- One row per leaf, written in the transaction that attaches it: where
-- data of a tier and a time range lives, and how far a drop got (state,
-- audited_through), so a drop a crash interrupted resumes without a second
-- audit row.
CREATE TABLE lethe.leaves (
    name            text PRIMARY KEY,
    parent          text NOT NULL,
    tier            text NOT NULL CHECK (tier IN ('1w', '3w', '7w', 'forever', 'held', 'txns')),
    lo              timestamptz NOT NULL,
    hi              timestamptz NOT NULL,
    state           text NOT NULL DEFAULT 'attached' CHECK (state IN ('attached', 'detaching', 'detached')),
    audited_through uuid,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX leaves_parent_range_idx ON lethe.leaves (parent, lo);

-- The leaf of a tier holding time p_at: its bounds (UTC days, ISO weeks
-- starting Monday, months) and name.
CREATE FUNCTION lethe.leaf_range(p_tier text, p_at timestamptz, OUT lo timestamptz, OUT hi timestamptz, OUT name text)
LANGUAGE sql STABLE AS $$
    SELECT b.lo, b.hi,
           CASE p_tier
               WHEN 'txns' THEN 'txns_p' || to_char(b.lo AT TIME ZONE 'UTC', 'YYYYMMDD')
               WHEN 'forever' THEN 'segments_forever_p' || to_char(b.lo AT TIME ZONE 'UTC', 'YYYYMM')
               WHEN 'held' THEN 'segments_held_p' || to_char(b.lo AT TIME ZONE 'UTC', 'YYYYMM')
               ELSE 'segments_' || p_tier || '_p' || to_char(b.lo AT TIME ZONE 'UTC', 'YYYYMMDD')
           END
      FROM (SELECT u.t AT TIME ZONE 'UTC' AS lo, (u.t + u.span) AT TIME ZONE 'UTC' AS hi
              FROM (SELECT date_trunc(CASE p_tier WHEN '1w' THEN 'day' WHEN 'txns' THEN 'day'
                                                  WHEN '3w' THEN 'week' WHEN '7w' THEN 'week' ELSE 'month' END,
                                      p_at AT TIME ZONE 'UTC') AS t,
                           CASE p_tier WHEN '1w' THEN interval '1 day' WHEN 'txns' THEN interval '1 day'
                                       WHEN '3w' THEN interval '7 days' WHEN '7w' THEN interval '7 days'
                                       ELSE interval '1 month' END AS span) u) b
$$;

-- The name alone, for the check lethe.append makes on every call.
CREATE FUNCTION lethe.leaf_name(p_tier text, p_at timestamptz) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE p_tier
               WHEN '1w' THEN 'segments_1w_p' || to_char(p_at AT TIME ZONE 'UTC', 'YYYYMMDD')
               WHEN 'txns' THEN 'txns_p' || to_char(p_at AT TIME ZONE 'UTC', 'YYYYMMDD')
               WHEN 'forever' THEN 'segments_forever_p' || to_char(p_at AT TIME ZONE 'UTC', 'YYYYMM')
               WHEN 'held' THEN 'segments_held_p' || to_char(p_at AT TIME ZONE 'UTC', 'YYYYMM')
               ELSE 'segments_' || p_tier || '_p'
                    || to_char(date_trunc('week', p_at AT TIME ZONE 'UTC'), 'YYYYMMDD')
           END
$$;

-- How long a tier keeps a leaf after its range ends; NULL: forever.
CREATE FUNCTION lethe.tier_window(p_tier text) RETURNS interval
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE p_tier WHEN '1w' THEN interval '7 days' WHEN '3w' THEN interval '21 days'
                       WHEN '7w' THEN interval '49 days' END
$$;

-- Whether tier p_tier still keeps data appended at p_at: its leaf is not
-- wholly older than the tier's window. forever keeps everything.
CREATE FUNCTION lethe.tier_keeps(p_tier text, p_at timestamptz, p_now timestamptz) RETURNS bool
LANGUAGE sql STABLE AS $$
    SELECT p_tier = 'forever' OR (SELECT r.hi FROM lethe.leaf_range(p_tier, p_at) r) > p_now - lethe.tier_window(p_tier)
$$;

-- Creates the leaf of p_tier ('txns' for the sidecar) holding p_at unless
-- one exists, and answers its name. The leaf is created empty, given a
-- CHECK constraint matching its bounds (so ATTACH scans nothing), attached
-- (SHARE UPDATE EXCLUSIVE on its tier's table: appends, which take ROW
-- EXCLUSIVE, go on) and registered in lethe.leaves. The same lock taken
-- first serializes creators, so two appenders needing one leaf create it
-- once.
CREATE FUNCTION lethe.create_leaf(p_tier text, p_at timestamptz) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    r        record;
    v_parent text := CASE p_tier WHEN 'txns' THEN 'txns' ELSE 'segments_' || p_tier END;
    v_have   text;
BEGIN
    SELECT * INTO r FROM lethe.leaf_range(p_tier, p_at);
    EXECUTE format('LOCK TABLE lethe.%I IN SHARE UPDATE EXCLUSIVE MODE', v_parent);
    SELECT l.name INTO v_have FROM lethe.leaves l
     WHERE l.parent = v_parent AND l.state = 'attached' AND l.lo <= p_at AND p_at < l.hi;
    IF FOUND THEN
        RETURN v_have;
    END IF;
    EXECUTE format('CREATE TABLE lethe.%I (LIKE lethe.%I INCLUDING DEFAULTS INCLUDING STORAGE INCLUDING COMPRESSION)',
                   r.name, v_parent);
    EXECUTE format('ALTER TABLE lethe.%I ADD PRIMARY KEY (partition_id, base_offset)', r.name);
    IF p_tier = 'txns' THEN
        EXECUTE format('CREATE INDEX %I ON lethe.%I USING gin (hashes) WITH (fastupdate = off)',
                       r.name || '_hashes_idx', r.name);
        EXECUTE format('ALTER TABLE lethe.%I ADD CONSTRAINT leaf_bounds CHECK (created_at >= %L AND created_at < %L)',
                       r.name, r.lo, r.hi);
    ELSE
        EXECUTE format('ALTER TABLE lethe.%I ADD CONSTRAINT leaf_bounds CHECK (tier = %L AND appended_at >= %L AND appended_at < %L)',
                       r.name, p_tier, r.lo, r.hi);
    END IF;
    EXECUTE format('ALTER TABLE lethe.%I ATTACH PARTITION lethe.%I FOR VALUES FROM (%L) TO (%L)',
                   v_parent, r.name, r.lo, r.hi);
    -- The partition constraint says the same; one check per insert is enough.
    EXECUTE format('ALTER TABLE lethe.%I DROP CONSTRAINT leaf_bounds', r.name);
    INSERT INTO lethe.leaves (name, parent, tier, lo, hi) VALUES (r.name, v_parent, p_tier, r.lo, r.hi);
    RETURN r.name;
END $$;

-- The leaf of p_tier holding p_at, created when missing: a catalog cache
-- lookup when it exists (the common case).
CREATE FUNCTION lethe.ensure_leaf(p_tier text, p_at timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF to_regclass('lethe.' || lethe.leaf_name(p_tier, p_at)) IS NULL THEN
        PERFORM lethe.create_leaf(p_tier, p_at);
    END IF;
END $$;

-- The segment log, by tier then by append time.
ALTER TABLE lethe.segments RENAME TO segments_forever_legacy;
ALTER INDEX lethe.segments_pkey RENAME TO segments_forever_legacy_pkey;
ALTER TABLE lethe.segments_forever_legacy
    ADD COLUMN tier text NOT NULL DEFAULT 'forever',
    ADD COLUMN appended_at timestamptz NOT NULL DEFAULT '-infinity';

-- appended_at is the clock reading of the append that wrote the segment
-- (never earlier than the partition's previous append); moves keep it.
CREATE TABLE lethe.segments (
    partition_id uuid   NOT NULL,
    base_offset  bigint NOT NULL,
    last_offset  bigint NOT NULL,
    frame_count  int    NOT NULL,
    first_at     timestamptz NOT NULL,
    last_at      timestamptz NOT NULL,
    byte_size    int    NOT NULL,
    frames       bytea  NOT NULL,
    tier         text   NOT NULL,
    appended_at  timestamptz NOT NULL
) PARTITION BY LIST (tier);
CREATE TABLE lethe.segments_1w PARTITION OF lethe.segments FOR VALUES IN ('1w') PARTITION BY RANGE (appended_at);
CREATE TABLE lethe.segments_3w PARTITION OF lethe.segments FOR VALUES IN ('3w') PARTITION BY RANGE (appended_at);
CREATE TABLE lethe.segments_7w PARTITION OF lethe.segments FOR VALUES IN ('7w') PARTITION BY RANGE (appended_at);
CREATE TABLE lethe.segments_forever PARTITION OF lethe.segments FOR VALUES IN ('forever') PARTITION BY RANGE (appended_at);
CREATE TABLE lethe.segments_held PARTITION OF lethe.segments FOR VALUES IN ('held') PARTITION BY RANGE (appended_at);
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings
               WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)) THEN
        ALTER TABLE lethe.segments ALTER COLUMN frames SET COMPRESSION lz4;
        ALTER TABLE lethe.segments_1w ALTER COLUMN frames SET COMPRESSION lz4;
        ALTER TABLE lethe.segments_3w ALTER COLUMN frames SET COMPRESSION lz4;
        ALTER TABLE lethe.segments_7w ALTER COLUMN frames SET COMPRESSION lz4;
        ALTER TABLE lethe.segments_forever ALTER COLUMN frames SET COMPRESSION lz4;
        ALTER TABLE lethe.segments_held ALTER COLUMN frames SET COMPRESSION lz4;
    END IF;
END $$;

-- The sidecar, by day of the append.
ALTER TABLE lethe.txns RENAME TO txns_legacy;
ALTER INDEX lethe.txns_pkey RENAME TO txns_legacy_pkey;
ALTER INDEX lethe.txns_hashes_idx RENAME TO txns_legacy_hashes_idx;
CREATE TABLE lethe.txns (
    partition_id uuid   NOT NULL,
    base_offset  bigint NOT NULL,
    created_at   timestamptz NOT NULL,
    hashes       bigint[] NOT NULL
) PARTITION BY RANGE (created_at);

-- The old tables become the oldest leaves (keeping their primary key and
-- GIN index: nothing is rebuilt), or go when empty. The CHECK constraint
-- costs one scan of the segments' heap (not of their TOASTed frames).
DO $$
DECLARE
    v_hi timestamptz;
BEGIN
    IF EXISTS (SELECT 1 FROM lethe.segments_forever_legacy) THEN
        ALTER TABLE lethe.segments_forever_legacy
            ADD CONSTRAINT leaf_bounds CHECK (tier = 'forever' AND appended_at < '0001-01-01 00:00:00+00');
        ALTER TABLE lethe.segments_forever ATTACH PARTITION lethe.segments_forever_legacy
            FOR VALUES FROM (MINVALUE) TO ('0001-01-01 00:00:00+00');
        ALTER TABLE lethe.segments_forever_legacy DROP CONSTRAINT leaf_bounds;
        INSERT INTO lethe.leaves (name, parent, tier, lo, hi)
        VALUES ('segments_forever_legacy', 'segments_forever', 'forever', '-infinity', '0001-01-01 00:00:00+00');
    ELSE
        DROP TABLE lethe.segments_forever_legacy;
    END IF;
    IF EXISTS (SELECT 1 FROM lethe.txns_legacy) THEN
        SELECT date_trunc('day', greatest(now(), max(t.created_at)) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '1 day'
          INTO v_hi FROM lethe.txns_legacy t;
        EXECUTE format('ALTER TABLE lethe.txns_legacy ADD CONSTRAINT leaf_bounds CHECK (created_at < %L)', v_hi);
        EXECUTE format('ALTER TABLE lethe.txns ATTACH PARTITION lethe.txns_legacy FOR VALUES FROM (MINVALUE) TO (%L)', v_hi);
        ALTER TABLE lethe.txns_legacy DROP CONSTRAINT leaf_bounds;
        INSERT INTO lethe.leaves (name, parent, tier, lo, hi) VALUES ('txns_legacy', 'txns', 'txns', '-infinity', v_hi);
    ELSE
        DROP TABLE lethe.txns_legacy;
    END IF;
END $$;

-- lethe.append as in 003, on the new layout: the segment goes to the
-- queue's tier (read under the partition row lock, so an append never uses
-- a tier another replica changed), stamped appended_at (never earlier than
-- the partition's previous append); the dedup probe looks only at hashes
-- stored inside the queue's sidecar window, so it touches the day leaves
-- of that window and nothing older. A leaf that does not exist yet (the
-- clock moved past the leaves made ahead) is created here, before the
-- insert; when it exists this is a catalog cache lookup.
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
    IF to_regclass('lethe.' || lethe.leaf_name('txns', p_now)) IS NULL THEN
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

-- The on-disk size of the stored log: every leaf, with TOAST and indexes.
CREATE OR REPLACE FUNCTION lethe.store_disk_bytes() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT coalesce(sum(pg_total_relation_size(t.relid)), 0)::bigint
      FROM pg_partition_tree('lethe.segments') t WHERE t.isleaf
$$;

REVOKE ALL ON lethe.leaves FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.leaf_range(text, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.leaf_name(text, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.tier_window(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.tier_keeps(text, timestamptz, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.create_leaf(text, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.ensure_leaf(text, timestamptz) FROM PUBLIC;
