-- lethe.append writes one segment for one partition in one round trip:
-- it takes the partition row lock (the serializer of appends), drops
-- transaction ids already stored (and repeats within the batch), gives the
-- rest contiguous offsets, stores their frames as one segment row and their
-- hashes in the sidecar, and moves next_offset. It answers, for every input
-- position, the offset of the message and whether it was a duplicate.
CREATE FUNCTION lethe.append(
    p_partition uuid,
    p_hashes    bigint[],
    p_frames    bytea[],
    p_times     timestamptz[],
    p_now       timestamptz
) RETURNS TABLE (idx int, msg_offset bigint, duplicate bool)
LANGUAGE plpgsql AS $$
DECLARE
    v_next  bigint;
    v_fresh int[];
    v_n     int;
BEGIN
    SELECT p.next_offset INTO v_next
      FROM lethe.partitions p WHERE p.id = p_partition FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'partition % does not exist', p_partition USING ERRCODE = 'P0002';
    END IF;

    -- Positions that are the first of their hash in the batch and whose
    -- hash is not stored yet.
    SELECT coalesce(array_agg(f.i ORDER BY f.i), '{}') INTO v_fresh
      FROM (SELECT DISTINCT ON (u.h) u.h, u.i::int AS i
              FROM unnest(p_hashes) WITH ORDINALITY AS u(h, i)
             ORDER BY u.h, u.i) f
     WHERE NOT EXISTS (SELECT 1 FROM lethe.txns t
                        WHERE t.partition_id = p_partition AND t.txn_hash = f.h);
    v_n := cardinality(v_fresh);

    IF v_n > 0 THEN
        INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count,
                                    first_at, last_at, byte_size, frames)
        SELECT p_partition, v_next, v_next + v_n - 1, v_n,
               min(p_times[x.i]), max(p_times[x.i]),
               sum(length(p_frames[x.i]))::int,
               string_agg(p_frames[x.i], ''::bytea ORDER BY x.ord)
          FROM unnest(v_fresh) WITH ORDINALITY AS x(i, ord);

        INSERT INTO lethe.txns (partition_id, txn_hash, msg_offset, created_at)
        SELECT p_partition, p_hashes[x.i], v_next + x.ord - 1, p_now
          FROM unnest(v_fresh) WITH ORDINALITY AS x(i, ord);

        UPDATE lethe.partitions SET next_offset = v_next + v_n, last_push_at = p_now
         WHERE id = p_partition;
    END IF;

    RETURN QUERY
    SELECT u.i::int, t.msg_offset, NOT (u.i::int = ANY (v_fresh))
      FROM unnest(p_hashes) WITH ORDINALITY AS u(h, i)
      JOIN lethe.txns t ON t.partition_id = p_partition AND t.txn_hash = u.h
     ORDER BY u.i;
END $$;

REVOKE ALL ON FUNCTION lethe.append(uuid, bigint[], bytea[], timestamptz[], timestamptz) FROM PUBLIC;
