-- lethe.append writes one segment for one partition in one round trip. It
-- takes the partition row lock (the serializer of appends), looks the
-- batch's transaction-id hashes up in the sidecar, and stores the frames as
-- one segment row and their hashes as one sidecar row, then moves
-- next_offset.
--
-- The caller removes repeats within the batch and sends the frames already
-- concatenated (p_blob, frame i being p_lens[i] bytes), so the common case
-- (no hash stored before) does no per-frame work here. Only when some hashes
-- were stored before does it cut those frames out.
--
-- It answers one row: the base offset of the new segment (NULL when every
-- message was a duplicate) and, for the duplicates, their input positions
-- (1-based) and the offsets they were first stored at.
CREATE FUNCTION lethe.append(
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
-- Every statement here has an index path; a sequential scan of the sidecar
-- is never right, whatever a small or unanalyzed table makes it cost.
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
BEGIN
    SELECT p.next_offset INTO v_next
      FROM lethe.partitions p WHERE p.id = p_partition FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'partition % does not exist', p_partition USING ERRCODE = 'P0002';
    END IF;
    dup_idx := '{}';
    dup_offsets := '{}';

    -- The lookup must go through the GIN index, one probe per hash. Two
    -- plans the planner likes are ruinous here, since && compares every pair
    -- of elements of the rows it filters: the partition's primary key with
    -- && as a filter ("IS NOT DISTINCT FROM" makes the key unusable), and,
    -- for EXISTS, a sequential scan betting on an early match (count(*)
    -- needs every match, so it takes the index).
    SELECT count(*) INTO v_hits
      FROM lethe.txns t
     WHERE t.hashes && p_hashes AND t.partition_id IS NOT DISTINCT FROM p_partition;
    IF v_hits = 0 THEN
        INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count,
                                    first_at, last_at, byte_size, frames)
        VALUES (p_partition, v_next, v_next + v_total - 1, v_total,
                p_first_at, p_last_at, length(p_blob), p_blob);
        INSERT INTO lethe.txns (partition_id, base_offset, created_at, hashes)
        VALUES (p_partition, v_next, p_now, p_hashes);
        UPDATE lethe.partitions SET next_offset = v_next + v_total, last_push_at = p_now
         WHERE id = p_partition;
        base_offset := v_next;
        RETURN;
    END IF;

    -- Some hashes were stored before: answer those positions with the
    -- offset they were stored at, and store only the others.
    SELECT coalesce(array_agg(d.i ORDER BY d.i), '{}'), coalesce(array_agg(d.off ORDER BY d.i), '{}')
      INTO dup_idx, dup_offsets
      FROM (SELECT DISTINCT ON (u.i) u.i::int AS i,
                   t.base_offset + array_position(t.hashes, u.h) - 1 AS off
              FROM unnest(p_hashes) WITH ORDINALITY AS u(h, i)
              JOIN lethe.txns t ON t.hashes @> ARRAY[u.h] AND t.partition_id IS NOT DISTINCT FROM p_partition
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
                                first_at, last_at, byte_size, frames)
    VALUES (p_partition, v_next, v_next + v_new - 1, v_new,
            p_first_at, p_last_at, length(v_keep), v_keep);
    INSERT INTO lethe.txns (partition_id, base_offset, created_at, hashes)
    VALUES (p_partition, v_next, p_now, v_hashes);
    UPDATE lethe.partitions SET next_offset = v_next + v_new, last_push_at = p_now
     WHERE id = p_partition;
    base_offset := v_next;
END $$;

REVOKE ALL ON FUNCTION lethe.append(uuid, bigint[], int[], bytea, timestamptz, timestamptz, timestamptz) FROM PUBLIC;

-- lethe.txn_offset resolves a transaction-id hash to the offset it was
-- stored at in a partition, or NULL (never stored, or purged past its
-- window).
CREATE FUNCTION lethe.txn_offset(p_partition uuid, p_hash bigint) RETURNS bigint
LANGUAGE sql STABLE SET enable_seqscan = off AS $$
    SELECT min(t.base_offset + array_position(t.hashes, p_hash) - 1)  -- an aggregate: GIN, see append
      FROM lethe.txns t
     WHERE t.hashes @> ARRAY[p_hash] AND t.partition_id IS NOT DISTINCT FROM p_partition
$$;

REVOKE ALL ON FUNCTION lethe.txn_offset(uuid, bigint) FROM PUBLIC;
