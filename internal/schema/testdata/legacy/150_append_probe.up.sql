-- lethe.append probes the sidecar only for the transaction ids a producer
-- chose.
--
-- A push item without a transactionId gets one lethe mints at random
-- (a UUID) just before the append: no earlier message can carry it, so
-- looking its hash up in the sidecar can only cost (1.5 ms of the 10.5 ms
-- an append of 100 frames took, in a profile) or, on a 64-bit hash
-- collision, answer a new message as a duplicate. Its hash is still stored
-- (an ack or a trace names the message by it after its lease is gone).
-- Ids a producer sent, ids a replica's maintenance buffer minted (replayed
-- after a restart, they must be found) and every other caller's are
-- probed as before.
--
-- p_probe holds the hashes of p_hashes to look up; the rest are stored
-- unprobed. The 7-argument lethe.append of 130 stays, probing every hash,
-- for replicas of the previous version during a rolling upgrade.

CREATE FUNCTION lethe.append(
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
    -- avoid), in the leaves of the window only; none for minted ids.
    v_hits := 0;
    IF cardinality(p_probe) > 0 THEN
        SELECT count(*) INTO v_hits
          FROM lethe.txns t
         WHERE t.hashes && p_probe AND t.partition_id IS NOT DISTINCT FROM p_partition
           AND t.created_at >= v_since;
    END IF;
    v_new := v_total;
    IF v_hits > 0 THEN
        -- Some hash was stored before: answer its frames as duplicates of
        -- the stored ones and cut them out of the blob.
        SELECT coalesce(array_agg(d.i ORDER BY d.i), '{}'), coalesce(array_agg(d.off ORDER BY d.i), '{}')
          INTO dup_idx, dup_offsets
          FROM (SELECT DISTINCT ON (u.i) u.i::int AS i,
                       t.base_offset + array_position(t.hashes, u.h) - 1 AS off
                  FROM unnest(p_hashes) WITH ORDINALITY AS u(h, i)
                  JOIN lethe.txns t ON t.hashes @> ARRAY[u.h] AND t.partition_id IS NOT DISTINCT FROM p_partition
                                   AND t.created_at >= v_since
                 WHERE u.h = ANY (p_probe)
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
    END IF;

    -- One segment row (the blob as sent when nothing was cut, the common
    -- case), one sidecar row, the partition's next offset.
    INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count,
                                first_at, last_at, byte_size, frames, tier, appended_at)
    VALUES (p_partition, v_next, v_next + v_new - 1, v_new,
            p_first_at, p_last_at, length(coalesce(v_keep, p_blob)), coalesce(v_keep, p_blob), v_tier, v_at);
    INSERT INTO lethe.txns (partition_id, base_offset, created_at, hashes)
    VALUES (p_partition, v_next, p_now, coalesce(v_hashes, p_hashes));
    UPDATE lethe.partitions SET next_offset = v_next + v_new, last_push_at = v_at
     WHERE id = p_partition;
    base_offset := v_next;
END $$;

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
) LANGUAGE sql AS $$
    SELECT * FROM lethe.append(p_partition, p_hashes, p_hashes, p_lens, p_blob, p_first_at, p_last_at, p_now)
$$;

REVOKE ALL ON FUNCTION lethe.append(uuid, bigint[], bigint[], int[], bytea, timestamptz, timestamptz, timestamptz) FROM PUBLIC;
