-- Ids lethe mints are found by their offset, so the sidecar holds only the
-- ids producers chose.
--
-- A push item without a transactionId gets an id that says where the
-- message is (its partition and offset, store.MintedID): its frame stores
-- no id and it needs no sidecar entry, since nobody can know such an id
-- before the push answers and a lookup decodes it. The GIN insert was about
-- a quarter of a 100-frame append to one partition.
--
-- So a sidecar row no longer holds one hash per frame. positions[i] is the
-- frame (1-based, in the segment) that hashes[i] names; NULL, as in every
-- row written before, means every frame in order. A segment without a
-- producer's id has no sidecar row.

ALTER TABLE lethe.txns ADD COLUMN positions int[];

-- lethe.append_segment is lethe.append (migration 150) for frames of which
-- only some carry a producer's id: p_hashes are those ids' hashes, all
-- probed, and p_positions their frames (1-based among p_lens). dup_idx
-- answers frames (1-based among p_lens), as before.
CREATE FUNCTION lethe.append_segment(
    p_partition uuid,
    p_hashes    bigint[],
    p_positions int[],
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

REVOKE ALL ON FUNCTION lethe.append_segment(uuid, bigint[], int[], int[], bytea, timestamptz, timestamptz, timestamptz) FROM PUBLIC;

-- lethe.append_segments is lethe.append_group (migration 151) for such
-- segments: segment i holds p_counts[i] frames, of which p_id_counts[i]
-- carry a producer's id; p_hashes and p_positions are every segment's
-- concatenated, positions counted within their segment. As before, it
-- writes nothing and answers NULL when a partition is gone or a hash is in
-- the sidecar of the widest window.
CREATE FUNCTION lethe.append_segments(
    p_partitions uuid[],
    p_counts     int[],
    p_id_counts  int[],
    p_hashes     bigint[],
    p_positions  int[],
    p_blobs      bytea[],
    p_first_at   timestamptz[],
    p_last_at    timestamptz[],
    p_now        timestamptz
) RETURNS bigint[]
LANGUAGE plpgsql
SET enable_seqscan = off
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

REVOKE ALL ON FUNCTION lethe.append_segments(uuid[], int[], int[], bigint[], int[], bytea[], timestamptz[], timestamptz[], timestamptz) FROM PUBLIC;

-- A sidecar row's hash names the frame at its position.
CREATE OR REPLACE FUNCTION lethe.txn_offset(p_partition uuid, p_hash bigint) RETURNS bigint
LANGUAGE sql STABLE SET enable_seqscan = off AS $$
    SELECT min(t.base_offset + coalesce(t.positions[array_position(t.hashes, p_hash)],
                                        array_position(t.hashes, p_hash)) - 1)  -- an aggregate: GIN, see 003
      FROM lethe.txns t
     WHERE t.hashes @> ARRAY[p_hash] AND t.partition_id IS NOT DISTINCT FROM p_partition
$$;

-- The lethe.append of 150, still called by replicas of the previous version
-- during a rolling upgrade, reads duplicates' offsets through positions
-- now: it is lethe.append_segment with an id on every frame. Its p_probe
-- (ids it minted at random) is probed too; that costs time, not answers.
CREATE OR REPLACE FUNCTION lethe.append(
    p_partition uuid,
    p_hashes    bigint[],
    p_probe     bigint[],
    p_lens      int[],
    p_blob      bytea,
    p_first_at  timestamptz,
    p_last_at   timestamptz,
    p_now       timestamptz,
    OUT base_offset bigint,
    OUT dup_idx     int[],
    OUT dup_offsets bigint[]
) LANGUAGE sql AS $$
    SELECT * FROM lethe.append_segment(p_partition, p_hashes,
                                       (SELECT coalesce(array_agg(g::int), '{}') FROM generate_series(1, cardinality(p_hashes)) g),
                                       p_lens, p_blob, p_first_at, p_last_at, p_now)
$$;
