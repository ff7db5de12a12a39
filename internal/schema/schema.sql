CREATE SCHEMA lethe;

CREATE FUNCTION lethe.append(p_partition uuid, p_hashes bigint[], p_lens integer[], p_blob bytea, p_first_at timestamp with time zone, p_last_at timestamp with time zone, p_now timestamp with time zone, OUT base_offset bigint, OUT dup_idx integer[], OUT dup_offsets bigint[]) RETURNS record
    LANGUAGE sql
    AS $$
    SELECT * FROM lethe.append(p_partition, p_hashes, p_hashes, p_lens, p_blob, p_first_at, p_last_at, p_now)
$$;

CREATE FUNCTION lethe.append(p_partition uuid, p_hashes bigint[], p_probe bigint[], p_lens integer[], p_blob bytea, p_first_at timestamp with time zone, p_last_at timestamp with time zone, p_now timestamp with time zone, OUT base_offset bigint, OUT dup_idx integer[], OUT dup_offsets bigint[]) RETURNS record
    LANGUAGE sql
    AS $$
    SELECT * FROM lethe.append_segment(p_partition, p_hashes,
                                       (SELECT coalesce(array_agg(g::int), '{}') FROM generate_series(1, cardinality(p_hashes)) g),
                                       p_lens, p_blob, p_first_at, p_last_at, p_now)
$$;

CREATE FUNCTION lethe.append_group(p_partitions uuid[], p_counts integer[], p_hashes bigint[], p_probe bigint[], p_blobs bytea[], p_first_at timestamp with time zone[], p_last_at timestamp with time zone[], p_now timestamp with time zone) RETURNS bigint[]
    LANGUAGE plpgsql
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_ids   uuid[];
    v_next  bigint[];
    v_tier  text[];
    v_at    timestamptz[];
    v_since timestamptz;
    v_hits  bigint := 0;
    r       record;
BEGIN
    SELECT array_agg(l.id ORDER BY l.id), array_agg(l.next_offset ORDER BY l.id),
           array_agg(l.tier ORDER BY l.id), array_agg(l.at ORDER BY l.id), min(l.since)
      INTO v_ids, v_next, v_tier, v_at, v_since
      FROM (SELECT p.id, p.next_offset, q.retention_tier AS tier,
                   greatest(p_now, coalesce(p.last_push_at, p_now)) AS at,
                   p_now - make_interval(secs => greatest(q.dedup_window_seconds,
                                                          q.completed_retention_seconds, 900)) AS since
              FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
             WHERE p.id = ANY (p_partitions)
             ORDER BY p.id
               FOR UPDATE OF p) l;
    IF v_ids IS DISTINCT FROM p_partitions THEN
        RETURN NULL; -- a partition is gone (or the caller did not sort)
    END IF;

    -- The leaves the group writes to, created where missing (as lethe.append).
    FOR r IN SELECT DISTINCT u.tier, u.at FROM unnest(v_tier, v_at) AS u(tier, at) LOOP
        IF to_regclass('lethe.' || lethe.leaf_name(r.tier, r.at)) IS NULL THEN
            PERFORM lethe.create_leaf(r.tier, r.at);
        END IF;
    END LOOP;
    PERFORM 1 FROM lethe.leaves l
     WHERE l.parent = 'txns' AND l.state = 'attached' AND l.lo <= p_now AND p_now < l.hi;
    IF NOT FOUND THEN
        PERFORM lethe.create_leaf('txns', p_now);
    END IF;

    -- One GIN lookup for the group, in the widest window of its queues (a
    -- hit outside a partition's own window only sends the group the exact
    -- way). OFFSET 0 keeps the partition test out of the index choice, so
    -- the lookup stays on the GIN index (see 003).
    IF cardinality(p_probe) > 0 THEN
        SELECT count(*) INTO v_hits
          FROM (SELECT t.partition_id FROM lethe.txns t
                 WHERE t.hashes && p_probe AND t.created_at >= v_since OFFSET 0) t
         WHERE t.partition_id = ANY (p_partitions);
    END IF;
    IF v_hits > 0 THEN
        RETURN NULL;
    END IF;

    INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count,
                                first_at, last_at, byte_size, frames, tier, appended_at)
    SELECT u.id, u.next, u.next + u.n - 1, u.n, u.first_at, u.last_at, length(u.blob), u.blob, u.tier, u.at
      FROM unnest(v_ids, v_next, p_counts, p_first_at, p_last_at, p_blobs, v_tier, v_at)
           AS u(id, next, n, first_at, last_at, blob, tier, at);
    INSERT INTO lethe.txns (partition_id, base_offset, created_at, hashes)
    SELECT u.id, u.next, p_now, p_hashes[u.upto - u.n + 1 : u.upto]
      FROM (SELECT u.id, u.next, u.n, sum(u.n) OVER (ORDER BY u.i)::int AS upto
              FROM unnest(v_ids, v_next, p_counts) WITH ORDINALITY AS u(id, next, n, i)) u;
    UPDATE lethe.partitions p SET next_offset = u.next + u.n, last_push_at = u.at
      FROM unnest(v_ids, v_next, p_counts, v_at) AS u(id, next, n, at)
     WHERE p.id = u.id;
    RETURN v_next;
END $$;

CREATE FUNCTION lethe.append_segment(p_partition uuid, p_hashes bigint[], p_positions integer[], p_lens integer[], p_blob bytea, p_first_at timestamp with time zone, p_last_at timestamp with time zone, p_now timestamp with time zone, OUT base_offset bigint, OUT dup_idx integer[], OUT dup_offsets bigint[]) RETURNS record
    LANGUAGE plpgsql
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_next      bigint;
    v_new       int := cardinality(p_lens);
    v_hashes    bigint[] := p_hashes;
    v_positions int[] := p_positions;
    v_keep      bytea;
    v_hits      bigint := 0;
    v_tier      text;
    v_at        timestamptz;
    v_since     timestamptz;
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
    dup_idx := '{}';
    dup_offsets := '{}';

    IF cardinality(p_hashes) > 0 THEN
        PERFORM 1 FROM lethe.leaves l
         WHERE l.parent = 'txns' AND l.state = 'attached' AND l.lo <= p_now AND p_now < l.hi;
        IF NOT FOUND THEN
            PERFORM lethe.create_leaf('txns', p_now);
        END IF;
        -- Through the GIN index, one probe per hash, in the window's leaves.
        SELECT count(*) INTO v_hits
          FROM lethe.txns t
         WHERE t.hashes && p_hashes AND t.partition_id IS NOT DISTINCT FROM p_partition
           AND t.created_at >= v_since;
    END IF;
    IF v_hits > 0 THEN
        -- Some id was stored before: answer its frame as a duplicate of the
        -- stored one and cut it out of the blob and the hashes.
        SELECT coalesce(array_agg(d.frame ORDER BY d.frame), '{}'), coalesce(array_agg(d.off ORDER BY d.frame), '{}')
          INTO dup_idx, dup_offsets
          FROM (SELECT DISTINCT ON (u.i) p_positions[u.i::int] AS frame,
                       t.base_offset + coalesce(t.positions[array_position(t.hashes, u.h)],
                                                array_position(t.hashes, u.h)) - 1 AS off
                  FROM unnest(p_hashes) WITH ORDINALITY AS u(h, i)
                  JOIN lethe.txns t ON t.hashes @> ARRAY[u.h] AND t.partition_id IS NOT DISTINCT FROM p_partition
                                   AND t.created_at >= v_since
                 ORDER BY u.i, t.base_offset) d;
        v_new := cardinality(p_lens) - cardinality(dup_idx);
        IF v_new = 0 THEN
            base_offset := NULL;
            RETURN;
        END IF;
        -- The ids kept, at their frames' places among the frames kept.
        SELECT coalesce(array_agg(u.h ORDER BY u.pos), '{}'),
               coalesce(array_agg(u.pos - (SELECT count(*) FROM unnest(dup_idx) AS d(f) WHERE d.f < u.pos)::int
                                  ORDER BY u.pos), '{}')
          INTO v_hashes, v_positions
          FROM unnest(p_hashes, p_positions) AS u(h, pos)
         WHERE NOT (u.pos = ANY (dup_idx));
        SELECT string_agg(substring(p_blob FROM s.pos FOR s.len), ''::bytea ORDER BY s.i) INTO v_keep
          FROM (SELECT u.i::int AS i, u.len, (sum(u.len) OVER (ORDER BY u.i) - u.len + 1)::int AS pos
                  FROM unnest(p_lens) WITH ORDINALITY AS u(len, i)) s
         WHERE NOT (s.i = ANY (dup_idx));
    END IF;

    INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count,
                                first_at, last_at, byte_size, frames, tier, appended_at)
    VALUES (p_partition, v_next, v_next + v_new - 1, v_new,
            p_first_at, p_last_at, length(coalesce(v_keep, p_blob)), coalesce(v_keep, p_blob), v_tier, v_at);
    IF cardinality(v_hashes) > 0 THEN
        -- Positions are increasing and distinct, so as many as frames are 1..n.
        INSERT INTO lethe.txns (partition_id, base_offset, created_at, hashes, positions)
        VALUES (p_partition, v_next, p_now, v_hashes,
                CASE WHEN cardinality(v_hashes) = v_new THEN NULL ELSE v_positions END);
    END IF;
    UPDATE lethe.partitions SET next_offset = v_next + v_new, last_push_at = v_at
     WHERE id = p_partition;
    base_offset := v_next;
END $$;

CREATE FUNCTION lethe.append_segments(p_partitions uuid[], p_counts integer[], p_id_counts integer[], p_hashes bigint[], p_positions integer[], p_blobs bytea[], p_first_at timestamp with time zone[], p_last_at timestamp with time zone[], p_now timestamp with time zone) RETURNS bigint[]
    LANGUAGE plpgsql
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_ids   uuid[];
    v_next  bigint[];
    v_tier  text[];
    v_at    timestamptz[];
    v_since timestamptz;
    v_hits  bigint := 0;
    r       record;
BEGIN
    SELECT array_agg(l.id ORDER BY l.id), array_agg(l.next_offset ORDER BY l.id),
           array_agg(l.tier ORDER BY l.id), array_agg(l.at ORDER BY l.id), min(l.since)
      INTO v_ids, v_next, v_tier, v_at, v_since
      FROM (SELECT p.id, p.next_offset, q.retention_tier AS tier,
                   greatest(p_now, coalesce(p.last_push_at, p_now)) AS at,
                   p_now - make_interval(secs => greatest(q.dedup_window_seconds,
                                                          q.completed_retention_seconds, 900)) AS since
              FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
             WHERE p.id = ANY (p_partitions)
             ORDER BY p.id
               FOR UPDATE OF p) l;
    IF v_ids IS DISTINCT FROM p_partitions THEN
        RETURN NULL; -- a partition is gone (or the caller did not sort)
    END IF;

    FOR r IN SELECT DISTINCT u.tier, u.at FROM unnest(v_tier, v_at) AS u(tier, at) LOOP
        IF to_regclass('lethe.' || lethe.leaf_name(r.tier, r.at)) IS NULL THEN
            PERFORM lethe.create_leaf(r.tier, r.at);
        END IF;
    END LOOP;

    IF cardinality(p_hashes) > 0 THEN
        PERFORM 1 FROM lethe.leaves l
         WHERE l.parent = 'txns' AND l.state = 'attached' AND l.lo <= p_now AND p_now < l.hi;
        IF NOT FOUND THEN
            PERFORM lethe.create_leaf('txns', p_now);
        END IF;
        -- One GIN lookup for the group (OFFSET 0: see 151).
        SELECT count(*) INTO v_hits
          FROM (SELECT t.partition_id FROM lethe.txns t
                 WHERE t.hashes && p_hashes AND t.created_at >= v_since OFFSET 0) t
         WHERE t.partition_id = ANY (p_partitions);
        IF v_hits > 0 THEN
            RETURN NULL;
        END IF;
    END IF;

    INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count,
                                first_at, last_at, byte_size, frames, tier, appended_at)
    SELECT u.id, u.next, u.next + u.n - 1, u.n, u.first_at, u.last_at, length(u.blob), u.blob, u.tier, u.at
      FROM unnest(v_ids, v_next, p_counts, p_first_at, p_last_at, p_blobs, v_tier, v_at)
           AS u(id, next, n, first_at, last_at, blob, tier, at);
    IF cardinality(p_hashes) > 0 THEN
        INSERT INTO lethe.txns (partition_id, base_offset, created_at, hashes, positions)
        SELECT u.id, u.next, p_now, p_hashes[u.upto - u.k + 1 : u.upto],
               CASE WHEN u.k = u.n THEN NULL ELSE p_positions[u.upto - u.k + 1 : u.upto] END
          FROM (SELECT u.id, u.next, u.n, u.k, sum(u.k) OVER (ORDER BY u.i)::int AS upto
                  FROM unnest(v_ids, v_next, p_counts, p_id_counts) WITH ORDINALITY AS u(id, next, n, k, i)) u
         WHERE u.k > 0;
    END IF;
    UPDATE lethe.partitions p SET next_offset = u.next + u.n, last_push_at = u.at
      FROM unnest(v_ids, v_next, p_counts, v_at) AS u(id, next, n, at)
     WHERE p.id = u.id;
    RETURN v_next;
END $$;

CREATE FUNCTION lethe.apply_table_settings(p_table regclass) RETURNS integer
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

CREATE FUNCTION lethe.cleanup_partition(p_partition uuid, p_idle_before timestamp with time zone, p_now timestamp with time zone) RETURNS text
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

CREATE FUNCTION lethe.completed_bound(p_partition uuid) RETURNS bigint
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE WHEN EXISTS (SELECT 1 FROM lethe.partitions p
                              WHERE p.id = p_partition AND lethe.queue_held(p.queue_id))
                THEN 0
                ELSE (SELECT min(g.next_wanted) FROM lethe.group_positions(p_partition) g) END
$$;

CREATE FUNCTION lethe.confirm_tier(p_queue bigint, p_now timestamp with time zone) RETURNS TABLE(from_tier text, to_tier text, delete_messages bigint, delete_bytes bigint, move_messages bigint, move_bytes bigint, hold_messages bigint, hold_bytes bigint)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_to text;
    r    record;
BEGIN
    PERFORM 1 FROM lethe.queues q WHERE q.id = p_queue FOR UPDATE;
    SELECT rc.to_tier INTO v_to FROM lethe.retention_changes rc
     WHERE rc.queue_id = p_queue AND rc.state = 'awaiting_confirm';
    IF NOT FOUND THEN
        RETURN;
    END IF;
    UPDATE lethe.retention_changes rc
       SET delete_messages = 0, delete_bytes = 0, move_messages = 0, move_bytes = 0, hold_messages = 0, hold_bytes = 0
     WHERE rc.queue_id = p_queue;
    FOR r IN SELECT * FROM lethe.tier_change_preview(p_queue, v_to, p_now) LOOP
        UPDATE lethe.retention_changes rc
           SET delete_messages = CASE WHEN r.action = 'drop' THEN r.frames ELSE rc.delete_messages END,
               delete_bytes = CASE WHEN r.action = 'drop' THEN r.bytes ELSE rc.delete_bytes END,
               move_messages = CASE WHEN r.action = 'move' THEN r.frames ELSE rc.move_messages END,
               move_bytes = CASE WHEN r.action = 'move' THEN r.bytes ELSE rc.move_bytes END,
               hold_messages = CASE WHEN r.action = 'hold' THEN r.frames ELSE rc.hold_messages END,
               hold_bytes = CASE WHEN r.action = 'hold' THEN r.bytes ELSE rc.hold_bytes END
         WHERE rc.queue_id = p_queue;
    END LOOP;
    UPDATE lethe.retention_changes rc SET state = 'running', confirmed_at = p_now, updated_at = p_now
     WHERE rc.queue_id = p_queue;
    UPDATE lethe.queues q SET retention_tier = v_to, updated_at = p_now WHERE q.id = p_queue;
    RETURN QUERY SELECT rc.from_tier, rc.to_tier, rc.delete_messages, rc.delete_bytes, rc.move_messages,
                        rc.move_bytes, rc.hold_messages, rc.hold_bytes
                   FROM lethe.retention_changes rc WHERE rc.queue_id = p_queue;
END $$;

CREATE FUNCTION lethe.create_leaf(p_tier text, p_at timestamp with time zone) RETURNS text
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

CREATE FUNCTION lethe.drop_partition_step(p_leaf text, p_partition uuid, p_rule text, p_batch integer, p_now timestamp with time zone) RETURNS TABLE(segments integer, frames bigint, bytes bigint, dead_letters integer, done boolean)
    LANGUAGE plpgsql
    AS $_$
DECLARE
    v_queue  text;
    v_name   text;
    v_purge  bool;
    v_dl     int := 0;
    v_segs   int;
    v_frames bigint;
    v_bytes  bigint;
    v_lo     bigint;
    v_hi     bigint;
BEGIN
    SELECT q.name, p.name, q.quarantined = 'purge' INTO v_queue, v_name, v_purge
      FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
     WHERE p.id = p_partition
       FOR UPDATE OF p;
    IF FOUND AND v_purge THEN
        EXECUTE format(
            'DELETE FROM lethe.dead_letters d WHERE d.id IN (
                 SELECT d2.id FROM lethe.dead_letters d2 JOIN lethe.%I s
                     ON s.partition_id = d2.partition_id AND d2.msg_offset BETWEEN s.base_offset AND s.last_offset
                  WHERE d2.partition_id = $1 LIMIT $2)', p_leaf) USING p_partition, p_batch;
        GET DIAGNOSTICS v_dl = ROW_COUNT;
        IF v_dl > 0 THEN
            INSERT INTO lethe.retention_history (executed_at, queue_name, partition_name, partition_id, rule,
                                                 segments, frames, bytes)
            VALUES (p_now, v_queue, v_name, p_partition, 'quarantine_purge', 0, v_dl, 0);
        END IF;
        IF v_dl >= p_batch THEN
            RETURN QUERY SELECT 0, 0::bigint, 0::bigint, v_dl, false;
            RETURN;
        END IF;
    END IF;
    EXECUTE format('SELECT count(*)::int, coalesce(sum(s.frame_count), 0)::bigint, coalesce(sum(s.byte_size), 0)::bigint,
                           min(s.base_offset), max(s.last_offset)
                      FROM lethe.%I s WHERE s.partition_id = $1', p_leaf)
       INTO v_segs, v_frames, v_bytes, v_lo, v_hi USING p_partition;
    IF v_queue IS NOT NULL AND v_segs > 0 THEN
        INSERT INTO lethe.retention_history (executed_at, queue_name, partition_name, partition_id, rule,
                                             segments, frames, bytes, from_offset, to_offset)
        VALUES (p_now, v_queue, v_name, p_partition, p_rule, v_segs, v_frames, v_bytes, v_lo, v_hi);
        UPDATE lethe.partitions p
           SET low_watermark = greatest(p.low_watermark,
                   coalesce((SELECT min(s.base_offset) FROM lethe.segments s WHERE s.partition_id = p_partition),
                            p.next_offset))
         WHERE p.id = p_partition;
    END IF;
    UPDATE lethe.leaves SET audited_through = p_partition WHERE name = p_leaf;
    RETURN QUERY SELECT v_segs, v_frames, v_bytes, v_dl, true;
END $_$;

CREATE FUNCTION lethe.ensure_leaf(p_tier text, p_at timestamp with time zone) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF p_tier = 'txns' THEN
        PERFORM lethe.ensure_leaves('txns', p_at, 0);
    ELSIF to_regclass('lethe.' || lethe.leaf_name(p_tier, p_at)) IS NULL THEN
        PERFORM lethe.create_leaf(p_tier, p_at);
    END IF;
END $$;

CREATE FUNCTION lethe.ensure_leaves(p_tier text, p_at timestamp with time zone, p_ahead integer) RETURNS void
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

CREATE FUNCTION lethe.finish_tier_change(p_queue bigint, p_now timestamp with time zone) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_tier text;
    v_next text;
BEGIN
    SELECT q.retention_tier INTO v_tier FROM lethe.queues q WHERE q.id = p_queue FOR UPDATE;
    SELECT rc.next_tier INTO v_next FROM lethe.retention_changes rc
     WHERE rc.queue_id = p_queue AND rc.state = 'running';
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT 1 FROM lethe.partitions p JOIN lethe.segments s ON s.partition_id = p.id
                WHERE p.queue_id = p_queue AND s.tier NOT IN (v_tier, 'held')) THEN
        RETURN false;
    END IF;
    UPDATE lethe.retention_changes rc SET state = 'done', finished_at = p_now, next_tier = NULL, updated_at = p_now
     WHERE rc.queue_id = p_queue;
    IF v_next IS NOT NULL THEN
        PERFORM lethe.request_tier(p_queue, v_next, p_now);
    END IF;
    RETURN true;
END $$;

CREATE FUNCTION lethe.fold_history_row() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.lost IS NOT NULL THEN
        PERFORM lethe.fold_losses(NEW.executed_at, NEW.queue_name, NEW.rule, NEW.partition_id, NEW.partition_name,
                                  NEW.lost);
        NEW.lost := NULL;
    END IF;
    UPDATE lethe.retention_history h
       SET segments    = h.segments + NEW.segments,
           frames      = h.frames + NEW.frames,
           bytes       = h.bytes + NEW.bytes,
           from_offset = CASE WHEN h.partition_id = NEW.partition_id
                              THEN least(h.from_offset, NEW.from_offset) ELSE h.from_offset END,
           to_offset   = CASE WHEN h.partition_id = NEW.partition_id
                              THEN greatest(h.to_offset, NEW.to_offset) ELSE h.to_offset END,
           partitions  = h.partitions + CASE WHEN h.last_partition = NEW.partition_id
                                               OR h.ranges ? NEW.partition_name THEN 0 ELSE 1 END,
           ranges      = lethe.history_ranges_add(h.ranges, NEW.partition_name, NEW.from_offset, NEW.to_offset,
                                                  NEW.frames),
           last_partition = NEW.partition_id
     WHERE h.queue_name = NEW.queue_name AND h.executed_at = NEW.executed_at AND h.rule = NEW.rule
       AND h.ranges IS NOT NULL;
    IF FOUND THEN
        RETURN NULL;
    END IF;
    NEW.partitions := 1;
    NEW.ranges := jsonb_build_object(NEW.partition_name, jsonb_build_array(NEW.from_offset, NEW.to_offset, NEW.frames));
    NEW.last_partition := NEW.partition_id;
    RETURN NEW;
END $$;

CREATE FUNCTION lethe.fold_losses(p_at timestamp with time zone, p_queue text, p_rule text, p_partition uuid, p_name text, p_lost jsonb) RETURNS void
    LANGUAGE sql
    AS $$
    INSERT INTO lethe.retention_losses AS l (executed_at, queue_name, rule, group_name, messages, leased, partitions,
                                             partition_name, partition_id, from_offset, to_offset, ranges, last_partition)
    SELECT p_at, p_queue, p_rule, g ->> 'group', (g ->> 'messages')::bigint, coalesce((g ->> 'leased')::bigint, 0), 1,
           p_name, p_partition, (g ->> 'fromOffset')::bigint, (g ->> 'toOffset')::bigint,
           jsonb_build_object(p_name, jsonb_build_array((g ->> 'fromOffset')::bigint, (g ->> 'toOffset')::bigint,
                                                        (g ->> 'messages')::bigint)),
           p_partition
      FROM jsonb_array_elements(p_lost) AS g
    ON CONFLICT (executed_at, queue_name, rule, group_name) DO UPDATE SET
        messages    = l.messages + EXCLUDED.messages,
        leased      = l.leased + EXCLUDED.leased,
        from_offset = CASE WHEN l.partition_id = EXCLUDED.partition_id
                           THEN least(l.from_offset, EXCLUDED.from_offset) ELSE l.from_offset END,
        to_offset   = CASE WHEN l.partition_id = EXCLUDED.partition_id
                           THEN greatest(l.to_offset, EXCLUDED.to_offset) ELSE l.to_offset END,
        partitions  = l.partitions + CASE WHEN l.last_partition = EXCLUDED.partition_id
                                            OR l.ranges ? EXCLUDED.partition_name THEN 0 ELSE 1 END,
        ranges      = lethe.history_ranges_add(l.ranges, EXCLUDED.partition_name, EXCLUDED.from_offset,
                                               EXCLUDED.to_offset, EXCLUDED.messages),
        last_partition = EXCLUDED.partition_id
$$;

CREATE FUNCTION lethe.fold_reclaim_row() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE lethe.reclaim_history h
       SET rows   = h.rows + NEW.rows,
           steps  = h.steps + 1,
           oldest = least(h.oldest, NEW.oldest),
           newest = greatest(h.newest, NEW.newest)
     WHERE h.executed_at = NEW.executed_at AND h.rule = NEW.rule AND h.subject = NEW.subject;
    IF FOUND THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END $$;

CREATE FUNCTION lethe.group_positions(p_partition uuid) RETURNS TABLE(group_name text, next_wanted bigint, lease_from bigint, lease_to bigint)
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

CREATE FUNCTION lethe.history_ranges_add(p_ranges jsonb, p_name text, p_from bigint, p_to bigint, p_messages bigint) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE
        WHEN p_ranges ? p_name THEN
            jsonb_set(p_ranges, ARRAY[p_name], jsonb_build_array(
                least((p_ranges -> p_name ->> 0)::bigint, p_from),
                greatest((p_ranges -> p_name ->> 1)::bigint, p_to),
                (p_ranges -> p_name ->> 2)::bigint + p_messages))
        WHEN (SELECT count(*) FROM jsonb_object_keys(p_ranges)) < 16 AND pg_column_size(p_ranges) < 256 THEN
            p_ranges || jsonb_build_object(p_name, jsonb_build_array(p_from, p_to, p_messages))
        ELSE p_ranges
    END
$$;

CREATE FUNCTION lethe.jsonb_or_null(p_text text) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    AS $$
BEGIN
    RETURN p_text::jsonb;
EXCEPTION WHEN others THEN
    RETURN NULL;
END $$;

CREATE FUNCTION lethe.leaf_name(p_tier text, p_at timestamp with time zone) RETURNS text
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

CREATE FUNCTION lethe.leaf_pending(p_leaf text) RETURNS boolean
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

CREATE FUNCTION lethe.leaf_range(p_tier text, p_at timestamp with time zone, OUT lo timestamp with time zone, OUT hi timestamp with time zone, OUT name text) RETURNS record
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

CREATE FUNCTION lethe.partition_reclaimable(p_partition uuid, p_idle_before timestamp with time zone) RETURNS boolean
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

CREATE FUNCTION lethe.purge_txns_step(p_partition uuid, p_cutoff timestamp with time zone, p_batch integer) RETURNS TABLE(purged integer, done boolean)
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

CREATE FUNCTION lethe.queue_held(p_queue bigint) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT EXISTS (SELECT 1 FROM lethe.retention_holds h WHERE h.queue_id = p_queue AND h.released_at IS NULL)
$$;

CREATE FUNCTION lethe.read_segments(p_partition uuid, p_from bigint, p_limit integer) RETURNS TABLE(base_offset bigint, last_offset bigint, last_at timestamp with time zone, frames bytea)
    LANGUAGE sql STABLE
    AS $$
    WITH first AS (
        SELECT coalesce((SELECT s.base_offset FROM lethe.segments s
                          WHERE s.partition_id = p_partition AND s.base_offset <= p_from
                          ORDER BY s.base_offset DESC LIMIT 1), p_from) AS base)
    SELECT w.base_offset, w.last_offset, w.last_at, w.frames FROM (
        SELECT s.base_offset, s.last_offset, s.last_at, s.frames,
               sum(s.frame_count) OVER (ORDER BY s.base_offset) - s.frame_count AS before
          FROM lethe.segments s
         WHERE s.partition_id = p_partition AND s.base_offset >= (SELECT base FROM first)
           AND s.last_offset >= p_from
         ORDER BY s.base_offset
         LIMIT p_limit + 1) w
     WHERE w.before < p_limit + (p_from - (SELECT base FROM first))
     ORDER BY w.base_offset
$$;

CREATE FUNCTION lethe.read_segments(p_partition uuid, p_from bigint, p_limit integer, p_max_bytes bigint) RETURNS TABLE(base_offset bigint, last_offset bigint, last_at timestamp with time zone, frames bytea)
    LANGUAGE sql STABLE
    AS $$
    WITH first AS (
        SELECT coalesce((SELECT s.base_offset FROM lethe.segments s
                          WHERE s.partition_id = p_partition AND s.base_offset <= p_from
                          ORDER BY s.base_offset DESC LIMIT 1), p_from) AS base)
    SELECT w.base_offset, w.last_offset, w.last_at, w.frames FROM (
        SELECT s.base_offset, s.last_offset, s.last_at, s.frames,
               sum(s.frame_count) OVER (ORDER BY s.base_offset) - s.frame_count AS before,
               sum(s.byte_size::bigint) OVER (ORDER BY s.base_offset) - s.byte_size AS bytes_before
          FROM lethe.segments s
         WHERE s.partition_id = p_partition AND s.base_offset >= (SELECT base FROM first)
           AND s.last_offset >= p_from
         ORDER BY s.base_offset
         LIMIT p_limit + 1) w
     WHERE w.before < p_limit + (p_from - (SELECT base FROM first))
       AND w.bytes_before < p_max_bytes
     ORDER BY w.base_offset
$$;

CREATE FUNCTION lethe.refuse_held_queue_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF lethe.queue_held(OLD.id) THEN
        RAISE EXCEPTION 'queue % is under a retention hold', OLD.name
            USING ERRCODE = 'object_in_use', HINT = 'release its holds first (lethe retention holds)';
    END IF;
    RETURN OLD;
END $$;

CREATE FUNCTION lethe.request_tier(p_queue bigint, p_tier text, p_now timestamp with time zone) RETURNS TABLE(outcome text, from_tier text, to_tier text, state text, delete_messages bigint, delete_bytes bigint, move_messages bigint, move_bytes bigint, hold_messages bigint, hold_bytes bigint)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_cur    text;
    c        lethe.retention_changes%ROWTYPE;
    v_out    text;
    v_any    bool;
    v_del    bigint := 0; v_delb  bigint := 0;
    v_move   bigint := 0; v_moveb bigint := 0;
    v_hold   bigint := 0; v_holdb bigint := 0;
    r        record;
BEGIN
    SELECT q.retention_tier INTO v_cur FROM lethe.queues q WHERE q.id = p_queue FOR UPDATE;
    SELECT * INTO c FROM lethe.retention_changes rc WHERE rc.queue_id = p_queue;
    IF c.state = 'running' THEN
        v_out := CASE WHEN p_tier = c.to_tier THEN 'unchanged' ELSE 'queued' END;
        UPDATE lethe.retention_changes rc
           SET next_tier = CASE WHEN p_tier = c.to_tier THEN NULL ELSE p_tier END, updated_at = p_now
         WHERE rc.queue_id = p_queue;
    ELSIF p_tier = v_cur THEN
        DELETE FROM lethe.retention_changes rc WHERE rc.queue_id = p_queue AND rc.state = 'awaiting_confirm';
        v_out := 'unchanged';
    ELSE
        FOR r IN SELECT * FROM lethe.tier_change_preview(p_queue, p_tier, p_now) LOOP
            CASE r.action
                WHEN 'drop' THEN v_del := r.frames; v_delb := r.bytes;
                WHEN 'move' THEN v_move := r.frames; v_moveb := r.bytes;
                WHEN 'hold' THEN v_hold := r.frames; v_holdb := r.bytes;
            END CASE;
        END LOOP;
        v_any := v_del + v_move + v_hold > 0;
        IF lethe.tier_rank(p_tier) < lethe.tier_rank(v_cur) AND v_any THEN
            v_out := 'awaiting_confirm';
        ELSE
            UPDATE lethe.queues q SET retention_tier = p_tier, updated_at = p_now WHERE q.id = p_queue;
            v_out := CASE WHEN v_any THEN 'started' ELSE 'applied' END;
        END IF;
        IF v_out = 'applied' THEN
            DELETE FROM lethe.retention_changes rc WHERE rc.queue_id = p_queue;
        ELSE
            INSERT INTO lethe.retention_changes AS rc (queue_id, from_tier, to_tier, state,
                   delete_messages, delete_bytes, move_messages, move_bytes, hold_messages, hold_bytes,
                   requested_at, confirmed_at, updated_at)
            VALUES (p_queue, v_cur, p_tier, CASE WHEN v_out = 'started' THEN 'running' ELSE 'awaiting_confirm' END,
                    v_del, v_delb, v_move, v_moveb, v_hold, v_holdb,
                    p_now, CASE WHEN v_out = 'started' THEN p_now END, p_now)
            ON CONFLICT (queue_id) DO UPDATE SET
                   from_tier = EXCLUDED.from_tier, to_tier = EXCLUDED.to_tier, state = EXCLUDED.state,
                   delete_messages = EXCLUDED.delete_messages, delete_bytes = EXCLUDED.delete_bytes,
                   move_messages = EXCLUDED.move_messages, move_bytes = EXCLUDED.move_bytes,
                   hold_messages = EXCLUDED.hold_messages, hold_bytes = EXCLUDED.hold_bytes,
                   deleted_messages = 0, moved_messages = 0, held_messages = 0, next_tier = NULL,
                   requested_at = EXCLUDED.requested_at, confirmed_at = EXCLUDED.confirmed_at,
                   finished_at = NULL, updated_at = EXCLUDED.updated_at;
        END IF;
    END IF;
    RETURN QUERY
    SELECT v_out, rc.from_tier, rc.to_tier, rc.state, rc.delete_messages, rc.delete_bytes,
           rc.move_messages, rc.move_bytes, rc.hold_messages, rc.hold_bytes
      FROM (SELECT 1) one LEFT JOIN lethe.retention_changes rc ON rc.queue_id = p_queue AND rc.state <> 'done';
END $$;

CREATE FUNCTION lethe.retention_cutoffs(p_now timestamp with time zone) RETURNS TABLE(queue_id bigint, queue_name text, retention_cutoff timestamp with time zone, completed_cutoff timestamp with time zone, evict_cutoff timestamp with time zone, txn_cutoff timestamp with time zone)
    LANGUAGE sql STABLE
    AS $$
    SELECT w.queue_id, w.queue_name,
           p_now - make_interval(secs => w.retention_seconds),
           p_now - make_interval(secs => w.completed_seconds),
           p_now - make_interval(secs => w.evict_seconds),
           p_now - make_interval(secs => w.txn_seconds)
      FROM lethe.queue_windows w
$$;

CREATE FUNCTION lethe.retention_rule(p_last_at timestamp with time zone, p_last_offset bigint, p_bound bigint, p_retention_cutoff timestamp with time zone, p_completed_cutoff timestamp with time zone, p_evict_cutoff timestamp with time zone) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE
        WHEN p_last_at < p_evict_cutoff THEN 'max_wait'
        WHEN p_last_at < p_completed_cutoff AND p_last_offset < p_bound THEN 'completed_retention'
        WHEN p_last_at < p_retention_cutoff THEN 'retention'
    END
$$;

CREATE FUNCTION lethe.segment_leaf_hi(p_tier text, p_at timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT (date_trunc(CASE p_tier WHEN '1w' THEN 'day' WHEN '3w' THEN 'week' WHEN '7w' THEN 'week' ELSE 'month' END,
                       p_at AT TIME ZONE 'UTC')
            + CASE p_tier WHEN '1w' THEN interval '1 day' WHEN '3w' THEN interval '7 days'
                          WHEN '7w' THEN interval '7 days' ELSE interval '1 month' END) AT TIME ZONE 'UTC'
$$;

CREATE FUNCTION lethe.settle_action(p_queue_tier text, p_seg_tier text, p_at timestamp with time zone, p_last_offset bigint, p_bound bigint, p_now timestamp with time zone) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE
        WHEN lethe.tier_keeps(p_queue_tier, p_at, p_now) THEN
             CASE WHEN p_seg_tier <> p_queue_tier THEN 'move' END
        WHEN p_last_offset >= p_bound THEN 'hold'
        ELSE 'drop'
    END
$$;

CREATE FUNCTION lethe.settle_start(p_partition uuid, p_leaf text, p_leaf_tier text) RETURNS bigint
    LANGUAGE plpgsql STABLE
    AS $_$
DECLARE
    v_tier  text;
    v_bound bigint;
    v_from  bigint;
BEGIN
    SELECT q.retention_tier INTO v_tier
      FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id WHERE p.id = p_partition;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF v_tier <> p_leaf_tier THEN
        RETURN -1;
    END IF;
    v_bound := lethe.completed_bound(p_partition);
    IF v_bound IS NULL THEN
        RETURN NULL;
    END IF;
    EXECUTE format('SELECT max(s.base_offset) FROM lethe.%I s WHERE s.partition_id = $1 AND s.base_offset <= $2', p_leaf)
       INTO v_from USING p_partition, v_bound;
    RETURN coalesce(v_from, v_bound);
END $_$;

CREATE FUNCTION lethe.settle_step(p_partition uuid, p_leaf text, p_tiers text[], p_from bigint, p_batch integer, p_budget bigint, p_now timestamp with time zone) RETURNS TABLE(rule text, segments integer, frames bigint, bytes bigint, next_from bigint, done boolean)
    LANGUAGE plpgsql
    AS $_$
DECLARE
    v_queue_id bigint;
    v_queue    text;
    v_name     text;
    v_tier     text;
    v_bound    bigint;
    v_src      text := CASE WHEN p_leaf IS NULL THEN 'lethe.segments' ELSE format('lethe.%I', p_leaf) END;
    v_from     bigint := p_from;
    r          record;
    v_act      text;
    v_acts     text[]   := '{}';
    v_base     bigint[] := '{}';
    v_last     bigint[] := '{}';
    v_count    int[]    := '{}';
    v_bytes    bigint[] := '{}';
    v_walked   int := 0;
    v_taken    bigint := 0;
    v_next     bigint;
BEGIN
    SELECT q.id, q.name, p.name, q.retention_tier INTO v_queue_id, v_queue, v_name, v_tier
      FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
     WHERE p.id = p_partition
       FOR UPDATE OF p;
    IF NOT FOUND THEN
        RETURN QUERY SELECT NULL::text, 0, 0::bigint, 0::bigint, NULL::bigint, true;
        RETURN;
    END IF;
    v_bound := lethe.completed_bound(p_partition);
    FOR r IN EXECUTE format(
        'SELECT s.base_offset, s.last_offset, s.frame_count, s.byte_size, s.tier,
                CASE WHEN s.appended_at = ''-infinity'' THEN s.last_at ELSE s.appended_at END AS at
           FROM %s s
          WHERE s.partition_id = $1 AND s.base_offset >= $2 AND ($3::text[] IS NULL OR s.tier = ANY ($3))
          ORDER BY s.base_offset
          LIMIT $4', v_src) USING p_partition, v_from, p_tiers, p_batch
    LOOP
        EXIT WHEN v_taken >= p_budget;
        v_walked := v_walked + 1;
        v_next := r.base_offset + 1;
        v_act := lethe.settle_action(v_tier, r.tier, r.at, r.last_offset, v_bound, p_now);
        CONTINUE WHEN v_act IS NULL OR (v_act = 'drop' AND p_leaf IS NOT NULL);
        IF v_act = 'move' THEN
            PERFORM lethe.ensure_leaf(v_tier, r.at);
        ELSIF v_act = 'hold' THEN
            PERFORM lethe.ensure_leaf('held', r.at);
        END IF;
        v_taken := v_taken + r.byte_size;
        v_acts  := v_acts || v_act;
        v_base  := v_base || r.base_offset;
        v_last  := v_last || r.last_offset;
        v_count := v_count || r.frame_count;
        v_bytes := v_bytes || r.byte_size::bigint;
    END LOOP;

    EXECUTE format(
        'WITH m AS (DELETE FROM %s s
                     USING unnest($2::bigint[], $3::text[]) AS a(base, act)
                    WHERE s.partition_id = $1 AND s.base_offset = a.base AND a.act IN (''move'', ''hold'')
                   RETURNING s.*, a.act)
         INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count, first_at, last_at,
                                     byte_size, frames, tier, appended_at)
         SELECT m.partition_id, m.base_offset, m.last_offset, m.frame_count, m.first_at, m.last_at, m.byte_size,
                m.frames, CASE m.act WHEN ''move'' THEN $4 ELSE ''held'' END,
                CASE WHEN m.appended_at = ''-infinity'' THEN m.last_at ELSE m.appended_at END
           FROM m', v_src) USING p_partition, v_base, v_acts, v_tier;
    IF 'drop' = ANY (v_acts) THEN
        DELETE FROM lethe.segments s
         USING unnest(v_base, v_acts) AS a(base, act)
         WHERE s.partition_id = p_partition AND s.base_offset = a.base AND a.act = 'drop'
           AND s.tier = ANY (p_tiers);
        UPDATE lethe.partitions p
           SET low_watermark = greatest(p.low_watermark,
                   coalesce((SELECT min(s.base_offset) FROM lethe.segments s WHERE s.partition_id = p_partition),
                            p.next_offset))
         WHERE p.id = p_partition;
    END IF;

    INSERT INTO lethe.retention_history (executed_at, queue_name, partition_name, partition_id, rule,
                                         segments, frames, bytes, from_offset, to_offset)
    SELECT p_now, v_queue, v_name, p_partition,
           CASE a.act WHEN 'move' THEN 'tier_move' WHEN 'hold' THEN 'held_move' ELSE 'tier_change' END,
           count(*), sum(a.cnt), sum(a.bytes), min(a.base), max(a.last)
      FROM unnest(v_acts, v_base, v_last, v_count, v_bytes) AS a(act, base, last, cnt, bytes)
     GROUP BY a.act;
    IF p_leaf IS NULL THEN
        UPDATE lethe.retention_changes c
           SET moved_messages = c.moved_messages + coalesce((SELECT sum(a.cnt) FROM unnest(v_acts, v_count) AS a(act, cnt) WHERE a.act = 'move'), 0),
               held_messages = c.held_messages + coalesce((SELECT sum(a.cnt) FROM unnest(v_acts, v_count) AS a(act, cnt) WHERE a.act = 'hold'), 0),
               deleted_messages = c.deleted_messages + coalesce((SELECT sum(a.cnt) FROM unnest(v_acts, v_count) AS a(act, cnt) WHERE a.act = 'drop'), 0),
               updated_at = p_now
         WHERE c.queue_id = v_queue_id AND c.state = 'running';
    END IF;

    IF cardinality(v_acts) = 0 THEN
        RETURN QUERY SELECT NULL::text, 0, 0::bigint, 0::bigint, v_next, v_walked < p_batch AND v_taken < p_budget;
        RETURN;
    END IF;
    RETURN QUERY
    SELECT CASE a.act WHEN 'move' THEN 'tier_move' WHEN 'hold' THEN 'held_move' ELSE 'tier_change' END,
           count(*)::int, sum(a.cnt)::bigint, sum(a.bytes)::bigint, v_next, v_walked < p_batch AND v_taken < p_budget
      FROM unnest(v_acts, v_count, v_bytes) AS a(act, cnt, bytes)
     GROUP BY a.act;
END $_$;

CREATE FUNCTION lethe.sidecar_span() RETURNS interval
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce(max(s.span), interval '5 minutes')
      FROM (SELECT make_interval(mins => m) AS span
              FROM unnest(ARRAY[5, 10, 15, 20, 30, 60, 120, 180, 240, 360, 480, 720, 1440]) AS m) s
     WHERE s.span <= lethe.sidecar_window() / 2
$$;

CREATE FUNCTION lethe.sidecar_window() RETURNS interval
    LANGUAGE sql STABLE
    AS $$
    SELECT make_interval(secs => greatest(coalesce(max(greatest(q.dedup_window_seconds,
                                                        q.completed_retention_seconds)), 0), 900))
      FROM lethe.queues q
$$;

CREATE FUNCTION lethe.store_disk_bytes() RETURNS bigint
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce(sum(pg_total_relation_size(t.relid)), 0)::bigint
      FROM pg_partition_tree('lethe.segments') t WHERE t.isleaf
$$;

CREATE FUNCTION lethe.store_judged_at(p_partition uuid, p_offset bigint) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce(
        (SELECT CASE WHEN h.last_offset >= p_offset THEN h.last_at END
           FROM (SELECT s.last_offset, s.last_at FROM lethe.segments s
                  WHERE s.partition_id = p_partition AND s.base_offset <= p_offset
                  ORDER BY s.base_offset DESC LIMIT 1) h),
        (SELECT s.last_at FROM lethe.segments s
          WHERE s.partition_id = p_partition AND s.base_offset > p_offset
          ORDER BY s.base_offset LIMIT 1))
$$;

CREATE FUNCTION lethe.store_offset_since(p_partition uuid, p_at timestamp with time zone) RETURNS bigint
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    r       record;
    n       int := 0;
    v_found bigint;
    v_old   boolean := false;
BEGIN
    FOR r IN SELECT s.base_offset, s.last_at, s.appended_at FROM lethe.segments s
              WHERE s.partition_id = p_partition ORDER BY s.base_offset DESC LIMIT 1000 LOOP
        n := n + 1;
        IF r.appended_at = '-infinity' THEN
            v_old := true;
            EXIT;
        END IF;
        IF r.appended_at < p_at THEN
            RETURN v_found;
        END IF;
        IF r.last_at >= p_at THEN
            v_found := r.base_offset;
        END IF;
    END LOOP;
    IF n < 1000 AND NOT v_old THEN
        RETURN v_found; -- every segment was read
    END IF;
    RETURN (SELECT s.base_offset FROM lethe.segments s
             WHERE s.partition_id = p_partition AND s.last_at >= p_at
             ORDER BY s.base_offset LIMIT 1);
END $$;

CREATE FUNCTION lethe.store_partition_stats(p_partition uuid, OUT messages bigint, OUT segments bigint, OUT bytes bigint) RETURNS record
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce(sum(s.frame_count), 0)::bigint, count(*), coalesce(sum(s.byte_size), 0)::bigint
      FROM lethe.segments s WHERE s.partition_id = p_partition
$$;

CREATE FUNCTION lethe.store_time_at(p_partition uuid, p_offset bigint) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce(
        (SELECT CASE WHEN h.last_offset >= p_offset THEN h.first_at END
           FROM (SELECT s.last_offset, s.first_at FROM lethe.segments s
                  WHERE s.partition_id = p_partition AND s.base_offset <= p_offset
                  ORDER BY s.base_offset DESC LIMIT 1) h),
        (SELECT s.first_at FROM lethe.segments s
          WHERE s.partition_id = p_partition AND s.base_offset > p_offset
          ORDER BY s.base_offset LIMIT 1))
$$;

CREATE FUNCTION lethe.sweep_preview(p_partition uuid, p_retention_cutoff timestamp with time zone, p_completed_cutoff timestamp with time zone, p_evict_cutoff timestamp with time zone, p_limit integer) RETURNS TABLE(rule text, segments integer, frames bigint, bytes bigint, truncated boolean)
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

CREATE FUNCTION lethe.sweep_step(p_partition uuid, p_retention_cutoff timestamp with time zone, p_completed_cutoff timestamp with time zone, p_evict_cutoff timestamp with time zone, p_batch integer, p_now timestamp with time zone) RETURNS TABLE(rule text, segments integer, frames bigint, bytes bigint, done boolean)
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

CREATE FUNCTION lethe.table_settings(p_root_schema text, p_root_name text) RETURNS text
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

CREATE FUNCTION lethe.tier_change_preview(p_queue bigint, p_to text, p_now timestamp with time zone) RETURNS TABLE(action text, segments bigint, frames bigint, bytes bigint)
    LANGUAGE sql STABLE
    AS $$
    SELECT a.act, count(*), sum(a.frame_count)::bigint, sum(a.byte_size)::bigint
      FROM (SELECT lethe.settle_action(p_to, s.tier,
                       CASE WHEN s.appended_at = '-infinity' THEN s.last_at ELSE s.appended_at END,
                       s.last_offset, b.bound, p_now) AS act,
                   s.frame_count, s.byte_size
              FROM lethe.partitions p
             CROSS JOIN LATERAL (SELECT lethe.completed_bound(p.id) AS bound) b
              JOIN lethe.segments s ON s.partition_id = p.id
             WHERE p.queue_id = p_queue AND s.tier <> 'held') a
     WHERE a.act IS NOT NULL
     GROUP BY a.act
$$;

CREATE FUNCTION lethe.tier_keeps(p_tier text, p_at timestamp with time zone, p_now timestamp with time zone) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT p_tier = 'forever' OR lethe.segment_leaf_hi(p_tier, p_at) > p_now - lethe.tier_window(p_tier)
$$;

CREATE FUNCTION lethe.tier_rank(p_tier text) RETURNS integer
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE p_tier WHEN '1w' THEN 1 WHEN '3w' THEN 2 WHEN '7w' THEN 3 WHEN 'forever' THEN 4 END
$$;

CREATE FUNCTION lethe.tier_window(p_tier text) RETURNS interval
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE p_tier WHEN '1w' THEN interval '7 days' WHEN '3w' THEN interval '21 days'
                       WHEN '7w' THEN interval '49 days' END
$$;

CREATE FUNCTION lethe.txn_offset(p_partition uuid, p_hash bigint) RETURNS bigint
    LANGUAGE sql STABLE
    SET enable_seqscan TO 'off'
    AS $$
    SELECT min(t.base_offset + coalesce(t.positions[array_position(t.hashes, p_hash)],
                                        array_position(t.hashes, p_hash)) - 1)  -- an aggregate: GIN, see 003
      FROM lethe.txns t
     WHERE t.hashes @> ARRAY[p_hash] AND t.partition_id IS NOT DISTINCT FROM p_partition
$$;

CREATE FUNCTION lethe.unread_losses(p_partition uuid, p_base bigint[], p_last bigint[]) RETURNS jsonb
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

CREATE TABLE lethe.cursors (
    partition_id uuid NOT NULL,
    group_name text NOT NULL,
    committed bigint NOT NULL,
    lease_id uuid,
    lease_from bigint,
    lease_to bigint,
    lease_until timestamp with time zone,
    lease_done bigint[],
    lease_fail bigint[],
    lease_error text,
    retry_offset bigint,
    retry_count integer DEFAULT 0 NOT NULL,
    retry_after timestamp with time zone,
    acked_ahead bigint[],
    last_pop_at timestamp with time zone,
    updated_at timestamp with time zone NOT NULL,
    lease_offsets bigint[],
    lease_hashes bigint[]
)
WITH (fillfactor='50', autovacuum_vacuum_scale_factor='0', autovacuum_vacuum_threshold='100', autovacuum_vacuum_cost_delay='0', toast.autovacuum_vacuum_scale_factor='0', toast.autovacuum_vacuum_threshold='100');

CREATE TABLE lethe.dead_letters (
    id bigint NOT NULL,
    partition_id uuid NOT NULL,
    group_name text NOT NULL,
    msg_offset bigint NOT NULL,
    txn_id text NOT NULL,
    trace_id text DEFAULT ''::text NOT NULL,
    payload jsonb,
    error text DEFAULT ''::text NOT NULL,
    retry_count integer NOT NULL,
    created_at timestamp with time zone NOT NULL,
    failed_at timestamp with time zone NOT NULL,
    payload_sealed bytea
);

ALTER TABLE lethe.dead_letters ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME lethe.dead_letters_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE lethe.partitions (
    id uuid NOT NULL,
    queue_id bigint NOT NULL,
    name text NOT NULL,
    next_offset bigint DEFAULT 0 NOT NULL,
    low_watermark bigint DEFAULT 0 NOT NULL,
    created_at timestamp with time zone NOT NULL,
    last_push_at timestamp with time zone
)
WITH (fillfactor='70', autovacuum_vacuum_scale_factor='0', autovacuum_vacuum_threshold='100', autovacuum_vacuum_cost_delay='0');

CREATE TABLE lethe.queues (
    id bigint NOT NULL,
    name text NOT NULL,
    namespace text DEFAULT ''::text NOT NULL,
    task text DEFAULT ''::text NOT NULL,
    lease_time integer DEFAULT 300 NOT NULL,
    retry_limit integer DEFAULT 3 NOT NULL,
    retry_delay_ms integer DEFAULT 1000 NOT NULL,
    delayed_processing integer DEFAULT 0 NOT NULL,
    window_buffer integer DEFAULT 0 NOT NULL,
    retention_enabled boolean DEFAULT false NOT NULL,
    retention_seconds integer DEFAULT 0 NOT NULL,
    completed_retention_seconds integer DEFAULT 0 NOT NULL,
    max_wait_time_seconds integer DEFAULT 0 NOT NULL,
    dedup_window_seconds integer DEFAULT 0 NOT NULL,
    options jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    retention_tier text DEFAULT 'forever'::text NOT NULL,
    quarantined text DEFAULT 'keep'::text NOT NULL,
    required_groups text[] DEFAULT '{}'::text[] NOT NULL,
    CONSTRAINT queues_quarantined_check CHECK ((quarantined = ANY (ARRAY['keep'::text, 'purge'::text]))),
    CONSTRAINT queues_retention_tier_check CHECK ((retention_tier = ANY (ARRAY['1w'::text, '3w'::text, '7w'::text, 'forever'::text])))
);

CREATE TABLE lethe.subscriptions (
    queue_id bigint NOT NULL,
    group_name text NOT NULL,
    mode text DEFAULT 'all'::text NOT NULL,
    from_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL
);

CREATE VIEW lethe.group_lag AS
 WITH members AS (
         SELECT s.queue_id,
            s.group_name
           FROM lethe.subscriptions s
        UNION
         SELECT p.queue_id,
            c.group_name
           FROM (lethe.cursors c
             JOIN lethe.partitions p ON ((p.id = c.partition_id)))
        ), placed AS (
         SELECT m.group_name,
            q.id AS queue_id,
            q.name AS queue_name,
            p.id AS partition_id,
            p.name AS partition_name,
            p.next_offset,
            p.low_watermark,
            c.committed,
            c.lease_id,
            c.lease_until,
            c.last_pop_at,
            sub.mode,
            sub.from_at,
            sub.created_at AS subscribed_at,
            GREATEST(p.low_watermark,
                CASE
                    WHEN (c.partition_id IS NOT NULL) THEN (c.committed + 1)
                    WHEN (sub.from_at IS NULL) THEN (0)::bigint
                    WHEN ((p.last_push_at IS NULL) OR (p.last_push_at < sub.from_at)) THEN p.next_offset
                    ELSE COALESCE(lethe.store_offset_since(p.id, sub.from_at), p.next_offset)
                END) AS first_unconsumed
           FROM ((((members m
             JOIN lethe.queues q ON ((q.id = m.queue_id)))
             LEFT JOIN lethe.partitions p ON ((p.queue_id = q.id)))
             LEFT JOIN lethe.cursors c ON (((c.partition_id = p.id) AND (c.group_name = m.group_name))))
             LEFT JOIN lethe.subscriptions sub ON (((sub.queue_id = q.id) AND (sub.group_name = m.group_name))))
        )
 SELECT pl.group_name,
    pl.queue_id,
    pl.queue_name,
    pl.partition_id,
    pl.partition_name,
    pl.next_offset,
    pl.low_watermark,
    pl.committed,
    pl.lease_id,
    pl.lease_until,
    pl.last_pop_at,
    pl.mode,
    pl.from_at,
    pl.subscribed_at,
    pl.first_unconsumed,
    GREATEST((pl.next_offset - pl.first_unconsumed), (0)::bigint) AS offset_lag
   FROM placed pl;

CREATE VIEW lethe.queue_windows AS
 SELECT q.id AS queue_id,
    q.name AS queue_name,
        CASE
            WHEN (q.retention_enabled AND (q.retention_seconds > 0) AND (NOT h.held)) THEN (q.retention_seconds)::bigint
            ELSE NULL::bigint
        END AS retention_seconds,
        CASE
            WHEN (q.retention_enabled AND (q.completed_retention_seconds > 0) AND (NOT h.held)) THEN (q.completed_retention_seconds)::bigint
            ELSE NULL::bigint
        END AS completed_seconds,
        CASE
            WHEN ((q.max_wait_time_seconds > 0) AND (NOT h.held)) THEN (q.max_wait_time_seconds)::bigint
            ELSE NULL::bigint
        END AS evict_seconds,
    (GREATEST(q.dedup_window_seconds, q.completed_retention_seconds, 900))::bigint AS txn_seconds
   FROM (lethe.queues q
     CROSS JOIN LATERAL ( SELECT lethe.queue_held(q.id) AS held) h);

CREATE VIEW lethe.group_loss AS
 SELECT gl.group_name,
    gl.queue_id,
    gl.queue_name,
    gl.partition_id,
    gl.partition_name,
    gl.next_offset,
    gl.low_watermark,
    gl.committed,
    gl.lease_id,
    gl.lease_until,
    gl.last_pop_at,
    gl.mode,
    gl.from_at,
    gl.subscribed_at,
    gl.first_unconsumed,
    gl.offset_lag,
    w.rule AS loss_rule,
        CASE
            WHEN ((gl.offset_lag > 0) AND (w.secs IS NOT NULL)) THEN (lethe.store_judged_at(gl.partition_id, gl.first_unconsumed) + make_interval(secs => (w.secs)::double precision))
            ELSE NULL::timestamp with time zone
        END AS loss_at
   FROM (lethe.group_lag gl
     LEFT JOIN ( SELECT qw.queue_id,
            LEAST(qw.retention_seconds, qw.evict_seconds) AS secs,
                CASE
                    WHEN (qw.evict_seconds <= COALESCE(qw.retention_seconds, qw.evict_seconds)) THEN 'maxWaitTimeSeconds'::text
                    ELSE 'retentionSeconds'::text
                END AS rule
           FROM lethe.queue_windows qw
          WHERE ((qw.retention_seconds IS NOT NULL) OR (qw.evict_seconds IS NOT NULL))) w ON ((w.queue_id = gl.queue_id)));

CREATE TABLE lethe.leaves (
    name text NOT NULL,
    parent text NOT NULL,
    tier text NOT NULL,
    lo timestamp with time zone NOT NULL,
    hi timestamp with time zone NOT NULL,
    state text DEFAULT 'attached'::text NOT NULL,
    audited_through uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT leaves_state_check CHECK ((state = ANY (ARRAY['attached'::text, 'detaching'::text, 'detached'::text]))),
    CONSTRAINT leaves_tier_check CHECK ((tier = ANY (ARRAY['1w'::text, '3w'::text, '7w'::text, 'forever'::text, 'held'::text, 'txns'::text])))
);

ALTER TABLE lethe.queues ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME lethe.queues_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE lethe.reclaim_history (
    id bigint NOT NULL,
    executed_at timestamp with time zone NOT NULL,
    rule text NOT NULL,
    subject text NOT NULL,
    rows bigint NOT NULL,
    oldest timestamp with time zone,
    newest timestamp with time zone,
    steps integer DEFAULT 1 NOT NULL,
    CONSTRAINT reclaim_history_rule_check CHECK ((rule = ANY (ARRAY['stream_query_retired'::text, 'stream_state_idle'::text, 'trace_retention'::text])))
)
WITH (fillfactor='90');

ALTER TABLE lethe.reclaim_history ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME lethe.reclaim_history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE lethe.retention_changes (
    queue_id bigint NOT NULL,
    from_tier text NOT NULL,
    to_tier text NOT NULL,
    state text NOT NULL,
    delete_messages bigint DEFAULT 0 NOT NULL,
    delete_bytes bigint DEFAULT 0 NOT NULL,
    move_messages bigint DEFAULT 0 NOT NULL,
    move_bytes bigint DEFAULT 0 NOT NULL,
    hold_messages bigint DEFAULT 0 NOT NULL,
    hold_bytes bigint DEFAULT 0 NOT NULL,
    deleted_messages bigint DEFAULT 0 NOT NULL,
    moved_messages bigint DEFAULT 0 NOT NULL,
    held_messages bigint DEFAULT 0 NOT NULL,
    next_tier text,
    requested_at timestamp with time zone NOT NULL,
    confirmed_at timestamp with time zone,
    finished_at timestamp with time zone,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT retention_changes_state_check CHECK ((state = ANY (ARRAY['awaiting_confirm'::text, 'running'::text, 'done'::text])))
);

CREATE TABLE lethe.retention_history (
    id bigint NOT NULL,
    executed_at timestamp with time zone NOT NULL,
    queue_name text NOT NULL,
    partition_name text NOT NULL,
    partition_id uuid NOT NULL,
    rule text NOT NULL,
    segments integer NOT NULL,
    frames bigint NOT NULL,
    bytes bigint NOT NULL,
    from_offset bigint,
    to_offset bigint,
    lost jsonb,
    partitions integer DEFAULT 1 NOT NULL,
    ranges jsonb,
    last_partition uuid,
    CONSTRAINT retention_history_rule_check CHECK ((rule = ANY (ARRAY['retention'::text, 'completed_retention'::text, 'max_wait'::text, 'partition_cleanup'::text, 'tier_drop'::text, 'held_move'::text, 'tier_move'::text, 'held_drop'::text, 'tier_change'::text, 'quarantine_purge'::text])))
)
WITH (autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_threshold='1000', fillfactor='90');

ALTER TABLE lethe.retention_history ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME lethe.retention_history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE lethe.retention_holds (
    id bigint NOT NULL,
    queue_id bigint NOT NULL,
    queue_name text NOT NULL,
    reason text NOT NULL,
    placed_at timestamp with time zone NOT NULL,
    placed_by text NOT NULL,
    released_at timestamp with time zone,
    released_by text,
    CONSTRAINT retention_holds_reason_check CHECK (((length(reason) >= 1) AND (length(reason) <= 1024)))
);

ALTER TABLE lethe.retention_holds ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME lethe.retention_holds_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE lethe.retention_losses (
    id bigint NOT NULL,
    executed_at timestamp with time zone NOT NULL,
    queue_name text NOT NULL,
    rule text NOT NULL,
    group_name text NOT NULL,
    messages bigint NOT NULL,
    leased bigint NOT NULL,
    partitions integer NOT NULL,
    partition_name text NOT NULL,
    partition_id uuid NOT NULL,
    from_offset bigint,
    to_offset bigint,
    ranges jsonb NOT NULL,
    last_partition uuid NOT NULL,
    CONSTRAINT retention_losses_only_time_rules_lose CHECK ((rule = ANY (ARRAY['retention'::text, 'max_wait'::text])))
)
WITH (fillfactor='70', autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_threshold='1000');

ALTER TABLE lethe.retention_losses ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME lethe.retention_losses_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE lethe.retention_runs (
    id bigint NOT NULL,
    started_at timestamp with time zone NOT NULL,
    elapsed_ms bigint NOT NULL,
    queues integer NOT NULL,
    segments_deleted bigint NOT NULL,
    frames_deleted bigint NOT NULL,
    bytes_deleted bigint NOT NULL,
    txns_purged bigint NOT NULL,
    max_wait_evicted bigint NOT NULL,
    partitions_deleted integer NOT NULL,
    subscriptions_deleted integer NOT NULL,
    metrics_purged bigint NOT NULL,
    error text
)
WITH (autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_threshold='1000');

ALTER TABLE lethe.retention_runs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME lethe.retention_runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE lethe.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE lethe.schema_repeatables (
    id bigint NOT NULL,
    checksum text NOT NULL,
    lethe text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE lethe.schema_repeatables ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME lethe.schema_repeatables_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE lethe.segments (
    partition_id uuid NOT NULL,
    base_offset bigint NOT NULL,
    last_offset bigint NOT NULL,
    frame_count integer NOT NULL,
    first_at timestamp with time zone NOT NULL,
    last_at timestamp with time zone NOT NULL,
    byte_size integer NOT NULL,
    frames bytea NOT NULL,
    tier text NOT NULL,
    appended_at timestamp with time zone NOT NULL
)
PARTITION BY LIST (tier);
ALTER TABLE ONLY lethe.segments ALTER COLUMN frames SET COMPRESSION lz4;

CREATE TABLE lethe.segments_1w (
    partition_id uuid NOT NULL,
    base_offset bigint NOT NULL,
    last_offset bigint NOT NULL,
    frame_count integer NOT NULL,
    first_at timestamp with time zone NOT NULL,
    last_at timestamp with time zone NOT NULL,
    byte_size integer NOT NULL,
    frames bytea NOT NULL,
    tier text NOT NULL,
    appended_at timestamp with time zone NOT NULL
)
PARTITION BY RANGE (appended_at);
ALTER TABLE ONLY lethe.segments_1w ALTER COLUMN frames SET COMPRESSION lz4;

CREATE TABLE lethe.segments_3w (
    partition_id uuid NOT NULL,
    base_offset bigint NOT NULL,
    last_offset bigint NOT NULL,
    frame_count integer NOT NULL,
    first_at timestamp with time zone NOT NULL,
    last_at timestamp with time zone NOT NULL,
    byte_size integer NOT NULL,
    frames bytea NOT NULL,
    tier text NOT NULL,
    appended_at timestamp with time zone NOT NULL
)
PARTITION BY RANGE (appended_at);
ALTER TABLE ONLY lethe.segments_3w ALTER COLUMN frames SET COMPRESSION lz4;

CREATE TABLE lethe.segments_7w (
    partition_id uuid NOT NULL,
    base_offset bigint NOT NULL,
    last_offset bigint NOT NULL,
    frame_count integer NOT NULL,
    first_at timestamp with time zone NOT NULL,
    last_at timestamp with time zone NOT NULL,
    byte_size integer NOT NULL,
    frames bytea NOT NULL,
    tier text NOT NULL,
    appended_at timestamp with time zone NOT NULL
)
PARTITION BY RANGE (appended_at);
ALTER TABLE ONLY lethe.segments_7w ALTER COLUMN frames SET COMPRESSION lz4;

CREATE TABLE lethe.segments_forever (
    partition_id uuid NOT NULL,
    base_offset bigint NOT NULL,
    last_offset bigint NOT NULL,
    frame_count integer NOT NULL,
    first_at timestamp with time zone NOT NULL,
    last_at timestamp with time zone NOT NULL,
    byte_size integer NOT NULL,
    frames bytea NOT NULL,
    tier text NOT NULL,
    appended_at timestamp with time zone NOT NULL
)
PARTITION BY RANGE (appended_at);
ALTER TABLE ONLY lethe.segments_forever ALTER COLUMN frames SET COMPRESSION lz4;

CREATE TABLE lethe.segments_held (
    partition_id uuid NOT NULL,
    base_offset bigint NOT NULL,
    last_offset bigint NOT NULL,
    frame_count integer NOT NULL,
    first_at timestamp with time zone NOT NULL,
    last_at timestamp with time zone NOT NULL,
    byte_size integer NOT NULL,
    frames bytea NOT NULL,
    tier text NOT NULL,
    appended_at timestamp with time zone NOT NULL
)
PARTITION BY RANGE (appended_at);
ALTER TABLE ONLY lethe.segments_held ALTER COLUMN frames SET COMPRESSION lz4;

CREATE TABLE lethe.settings (
    key text NOT NULL,
    value jsonb NOT NULL,
    updated_at timestamp with time zone NOT NULL
);

CREATE TABLE lethe.stream_queries (
    id uuid NOT NULL,
    name text NOT NULL,
    source_queue text NOT NULL,
    sink_queue text,
    config_hash text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    retired_at timestamp with time zone,
    retired_why text,
    CONSTRAINT stream_queries_check CHECK (((retired_at IS NULL) = (retired_why IS NULL))),
    CONSTRAINT stream_queries_retired_why_check CHECK ((retired_why = ANY (ARRAY['reset'::text, 'removed'::text])))
);

CREATE TABLE lethe.stream_state (
    query_id uuid NOT NULL,
    partition_id uuid NOT NULL,
    key text NOT NULL,
    value jsonb NOT NULL,
    updated_at timestamp with time zone NOT NULL
);

CREATE TABLE lethe.traces (
    id uuid NOT NULL,
    partition_id uuid NOT NULL,
    transaction_id text NOT NULL,
    msg_offset bigint,
    consumer_group text NOT NULL,
    event_type text NOT NULL,
    data jsonb NOT NULL,
    names text[] DEFAULT '{}'::text[] NOT NULL,
    worker_id text,
    created_at timestamp with time zone NOT NULL
);

CREATE TABLE lethe.txns (
    partition_id uuid NOT NULL,
    base_offset bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    hashes bigint[] NOT NULL,
    positions integer[]
)
PARTITION BY RANGE (created_at);

ALTER TABLE ONLY lethe.segments ATTACH PARTITION lethe.segments_1w FOR VALUES IN ('1w');

ALTER TABLE ONLY lethe.segments ATTACH PARTITION lethe.segments_3w FOR VALUES IN ('3w');

ALTER TABLE ONLY lethe.segments ATTACH PARTITION lethe.segments_7w FOR VALUES IN ('7w');

ALTER TABLE ONLY lethe.segments ATTACH PARTITION lethe.segments_forever FOR VALUES IN ('forever');

ALTER TABLE ONLY lethe.segments ATTACH PARTITION lethe.segments_held FOR VALUES IN ('held');

ALTER TABLE ONLY lethe.cursors
    ADD CONSTRAINT cursors_pkey PRIMARY KEY (partition_id, group_name);

ALTER TABLE ONLY lethe.dead_letters
    ADD CONSTRAINT dead_letters_pkey PRIMARY KEY (id);

ALTER TABLE ONLY lethe.leaves
    ADD CONSTRAINT leaves_pkey PRIMARY KEY (name);

ALTER TABLE ONLY lethe.partitions
    ADD CONSTRAINT partitions_pkey PRIMARY KEY (id);

ALTER TABLE ONLY lethe.partitions
    ADD CONSTRAINT partitions_queue_id_name_key UNIQUE (queue_id, name);

ALTER TABLE ONLY lethe.queues
    ADD CONSTRAINT queues_name_key UNIQUE (name);

ALTER TABLE ONLY lethe.queues
    ADD CONSTRAINT queues_pkey PRIMARY KEY (id);

ALTER TABLE ONLY lethe.reclaim_history
    ADD CONSTRAINT reclaim_history_pkey PRIMARY KEY (id);

ALTER TABLE ONLY lethe.retention_changes
    ADD CONSTRAINT retention_changes_pkey PRIMARY KEY (queue_id);

ALTER TABLE lethe.retention_history
    ADD CONSTRAINT retention_history_only_time_rules_lose CHECK (((lost IS NULL) OR (rule = ANY (ARRAY['retention'::text, 'max_wait'::text])))) NOT VALID;

ALTER TABLE ONLY lethe.retention_history
    ADD CONSTRAINT retention_history_pkey PRIMARY KEY (id);

ALTER TABLE ONLY lethe.retention_holds
    ADD CONSTRAINT retention_holds_pkey PRIMARY KEY (id);

ALTER TABLE ONLY lethe.retention_losses
    ADD CONSTRAINT retention_losses_decision_key UNIQUE (executed_at, queue_name, rule, group_name);

ALTER TABLE ONLY lethe.retention_losses
    ADD CONSTRAINT retention_losses_pkey PRIMARY KEY (id);

ALTER TABLE ONLY lethe.retention_runs
    ADD CONSTRAINT retention_runs_pkey PRIMARY KEY (id);

ALTER TABLE ONLY lethe.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);

ALTER TABLE ONLY lethe.schema_repeatables
    ADD CONSTRAINT schema_repeatables_pkey PRIMARY KEY (id);

ALTER TABLE ONLY lethe.settings
    ADD CONSTRAINT settings_pkey PRIMARY KEY (key);

ALTER TABLE ONLY lethe.stream_queries
    ADD CONSTRAINT stream_queries_pkey PRIMARY KEY (id);

ALTER TABLE ONLY lethe.stream_state
    ADD CONSTRAINT stream_state_pkey PRIMARY KEY (query_id, partition_id, key);

ALTER TABLE ONLY lethe.subscriptions
    ADD CONSTRAINT subscriptions_pkey PRIMARY KEY (queue_id, group_name);

ALTER TABLE ONLY lethe.traces
    ADD CONSTRAINT traces_pkey PRIMARY KEY (id);

CREATE INDEX dead_letters_failed_at_idx ON lethe.dead_letters USING btree (failed_at);

CREATE INDEX dead_letters_partition_idx ON lethe.dead_letters USING btree (partition_id, failed_at);

CREATE INDEX dead_letters_partition_offset_idx ON lethe.dead_letters USING btree (partition_id, msg_offset);

CREATE INDEX leaves_parent_range_idx ON lethe.leaves USING btree (parent, lo);

CREATE INDEX reclaim_history_time_idx ON lethe.reclaim_history USING btree (executed_at);

CREATE INDEX retention_history_queue_time_idx ON lethe.retention_history USING btree (queue_name, executed_at);

CREATE INDEX retention_history_time_idx ON lethe.retention_history USING btree (executed_at);

CREATE INDEX retention_holds_active_idx ON lethe.retention_holds USING btree (queue_id) WHERE (released_at IS NULL);

CREATE INDEX retention_runs_time_idx ON lethe.retention_runs USING btree (started_at);

CREATE UNIQUE INDEX stream_queries_live_name_idx ON lethe.stream_queries USING btree (name) WHERE (retired_at IS NULL);

CREATE INDEX stream_queries_retired_idx ON lethe.stream_queries USING btree (retired_at) WHERE (retired_at IS NOT NULL);

CREATE INDEX stream_state_updated_idx ON lethe.stream_state USING btree (updated_at);

CREATE INDEX traces_created_idx ON lethe.traces USING btree (created_at);

CREATE INDEX traces_message_idx ON lethe.traces USING btree (partition_id, transaction_id, created_at);

CREATE INDEX traces_names_idx ON lethe.traces USING gin (names);

CREATE TRIGGER queues_refuse_held_delete BEFORE DELETE ON lethe.queues FOR EACH ROW EXECUTE FUNCTION lethe.refuse_held_queue_delete();

CREATE TRIGGER reclaim_history_fold BEFORE INSERT ON lethe.reclaim_history FOR EACH ROW EXECUTE FUNCTION lethe.fold_reclaim_row();

CREATE TRIGGER retention_history_fold BEFORE INSERT ON lethe.retention_history FOR EACH ROW EXECUTE FUNCTION lethe.fold_history_row();

ALTER TABLE ONLY lethe.cursors
    ADD CONSTRAINT cursors_partition_id_fkey FOREIGN KEY (partition_id) REFERENCES lethe.partitions(id) ON DELETE CASCADE;

ALTER TABLE ONLY lethe.dead_letters
    ADD CONSTRAINT dead_letters_partition_id_fkey FOREIGN KEY (partition_id) REFERENCES lethe.partitions(id) ON DELETE CASCADE;

ALTER TABLE ONLY lethe.partitions
    ADD CONSTRAINT partitions_queue_id_fkey FOREIGN KEY (queue_id) REFERENCES lethe.queues(id) ON DELETE CASCADE;

ALTER TABLE ONLY lethe.retention_changes
    ADD CONSTRAINT retention_changes_queue_id_fkey FOREIGN KEY (queue_id) REFERENCES lethe.queues(id) ON DELETE CASCADE;

ALTER TABLE ONLY lethe.stream_state
    ADD CONSTRAINT stream_state_query_id_fkey FOREIGN KEY (query_id) REFERENCES lethe.stream_queries(id);

ALTER TABLE ONLY lethe.subscriptions
    ADD CONSTRAINT subscriptions_queue_id_fkey FOREIGN KEY (queue_id) REFERENCES lethe.queues(id) ON DELETE CASCADE;

REVOKE ALL ON FUNCTION lethe.append(p_partition uuid, p_hashes bigint[], p_lens integer[], p_blob bytea, p_first_at timestamp with time zone, p_last_at timestamp with time zone, p_now timestamp with time zone, OUT base_offset bigint, OUT dup_idx integer[], OUT dup_offsets bigint[]) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.append(p_partition uuid, p_hashes bigint[], p_probe bigint[], p_lens integer[], p_blob bytea, p_first_at timestamp with time zone, p_last_at timestamp with time zone, p_now timestamp with time zone, OUT base_offset bigint, OUT dup_idx integer[], OUT dup_offsets bigint[]) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.append_group(p_partitions uuid[], p_counts integer[], p_hashes bigint[], p_probe bigint[], p_blobs bytea[], p_first_at timestamp with time zone[], p_last_at timestamp with time zone[], p_now timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.append_segment(p_partition uuid, p_hashes bigint[], p_positions integer[], p_lens integer[], p_blob bytea, p_first_at timestamp with time zone, p_last_at timestamp with time zone, p_now timestamp with time zone, OUT base_offset bigint, OUT dup_idx integer[], OUT dup_offsets bigint[]) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.append_segments(p_partitions uuid[], p_counts integer[], p_id_counts integer[], p_hashes bigint[], p_positions integer[], p_blobs bytea[], p_first_at timestamp with time zone[], p_last_at timestamp with time zone[], p_now timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.apply_table_settings(p_table regclass) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.cleanup_partition(p_partition uuid, p_idle_before timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.completed_bound(p_partition uuid) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.confirm_tier(p_queue bigint, p_now timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.create_leaf(p_tier text, p_at timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.drop_partition_step(p_leaf text, p_partition uuid, p_rule text, p_batch integer, p_now timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.ensure_leaf(p_tier text, p_at timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.ensure_leaves(p_tier text, p_at timestamp with time zone, p_ahead integer) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.finish_tier_change(p_queue bigint, p_now timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.fold_history_row() FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.fold_losses(p_at timestamp with time zone, p_queue text, p_rule text, p_partition uuid, p_name text, p_lost jsonb) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.fold_reclaim_row() FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.group_positions(p_partition uuid) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.history_ranges_add(p_ranges jsonb, p_name text, p_from bigint, p_to bigint, p_messages bigint) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.jsonb_or_null(p_text text) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.leaf_name(p_tier text, p_at timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.leaf_pending(p_leaf text) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.leaf_range(p_tier text, p_at timestamp with time zone, OUT lo timestamp with time zone, OUT hi timestamp with time zone, OUT name text) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.partition_reclaimable(p_partition uuid, p_idle_before timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.purge_txns_step(p_partition uuid, p_cutoff timestamp with time zone, p_batch integer) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.queue_held(p_queue bigint) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.read_segments(p_partition uuid, p_from bigint, p_limit integer) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.read_segments(p_partition uuid, p_from bigint, p_limit integer, p_max_bytes bigint) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.refuse_held_queue_delete() FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.request_tier(p_queue bigint, p_tier text, p_now timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.retention_cutoffs(p_now timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.retention_rule(p_last_at timestamp with time zone, p_last_offset bigint, p_bound bigint, p_retention_cutoff timestamp with time zone, p_completed_cutoff timestamp with time zone, p_evict_cutoff timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.segment_leaf_hi(p_tier text, p_at timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.settle_action(p_queue_tier text, p_seg_tier text, p_at timestamp with time zone, p_last_offset bigint, p_bound bigint, p_now timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.settle_start(p_partition uuid, p_leaf text, p_leaf_tier text) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.settle_step(p_partition uuid, p_leaf text, p_tiers text[], p_from bigint, p_batch integer, p_budget bigint, p_now timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.sidecar_span() FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.sidecar_window() FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.store_disk_bytes() FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.store_judged_at(p_partition uuid, p_offset bigint) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.store_offset_since(p_partition uuid, p_at timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.store_partition_stats(p_partition uuid, OUT messages bigint, OUT segments bigint, OUT bytes bigint) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.store_time_at(p_partition uuid, p_offset bigint) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.sweep_preview(p_partition uuid, p_retention_cutoff timestamp with time zone, p_completed_cutoff timestamp with time zone, p_evict_cutoff timestamp with time zone, p_limit integer) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.sweep_step(p_partition uuid, p_retention_cutoff timestamp with time zone, p_completed_cutoff timestamp with time zone, p_evict_cutoff timestamp with time zone, p_batch integer, p_now timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.table_settings(p_root_schema text, p_root_name text) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.tier_change_preview(p_queue bigint, p_to text, p_now timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.tier_keeps(p_tier text, p_at timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.tier_rank(p_tier text) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.tier_window(p_tier text) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.txn_offset(p_partition uuid, p_hash bigint) FROM PUBLIC;

REVOKE ALL ON FUNCTION lethe.unread_losses(p_partition uuid, p_base bigint[], p_last bigint[]) FROM PUBLIC;
