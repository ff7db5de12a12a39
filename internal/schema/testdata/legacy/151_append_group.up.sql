-- A commit group's segments in one statement.
--
-- A commit group (engine/appender.go) is the next segment of every
-- partition that is ready at one moment. Pipelined (23b8e8a) it was still
-- one lethe.append per partition: one PL/pgSQL call, eight statements and
-- their plan lookups for each segment, which over many partitions is most
-- of a segment's cost when it holds one to ten frames (in a profile:
-- 0.33 ms a call over 100 partitions, half of it the call itself).
--
-- lethe.append_group writes the whole group with one statement per step:
-- it locks the partitions (in id order, as every writer of several does),
-- probes the sidecar once for every producer id of the group, inserts every
-- segment and every sidecar row, and moves every next_offset. It handles
-- the common case only: when a partition is missing or any probed hash is
-- in the sidecar of its window, it writes nothing and answers NULL, and the
-- caller writes each segment with lethe.append, which answers duplicates
-- and missing partitions one partition at a time.
--
-- p_partitions are distinct and sorted; segment i holds p_counts[i] frames
-- whose hashes are p_hashes[sum(p_counts[1:i-1]) + 1 ...] (the arrays of
-- all segments concatenated); p_probe is the hashes to look up, of any
-- segment (lethe.append's p_probe, migration 150).

CREATE FUNCTION lethe.append_group(
    p_partitions uuid[],
    p_counts     int[],
    p_hashes     bigint[],
    p_probe      bigint[],
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

REVOKE ALL ON FUNCTION lethe.append_group(uuid[], int[], bigint[], bigint[], bytea[], timestamptz[], timestamptz[], timestamptz) FROM PUBLIC;
