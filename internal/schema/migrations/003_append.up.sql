-- lethe.append writes one segment for one partition in one round trip. It
-- takes the partition row lock (the serializer of appends), records each
-- transaction-id hash in the sidecar at its offset, and stores the frames
-- as one segment row, then moves next_offset.
--
-- The caller removes repeats within the batch and sends the frames already
-- concatenated (p_blob, frame i being p_lens[i] bytes), so the common case
-- does no per-frame work here: the sidecar insert doubles as the duplicate
-- check (ON CONFLICT), and only when it finds a hash already stored does the
-- function cut those frames out and renumber.
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
) LANGUAGE plpgsql AS $$
DECLARE
    v_next  bigint;
    v_total int := cardinality(p_hashes);
    v_new   int;
    v_keep  bytea;
    v_fresh int[];
BEGIN
    SELECT p.next_offset INTO v_next
      FROM lethe.partitions p WHERE p.id = p_partition FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'partition % does not exist', p_partition USING ERRCODE = 'P0002';
    END IF;

    -- Provisional offsets assume no duplicates.
    WITH ins AS (
        INSERT INTO lethe.txns (partition_id, txn_hash, msg_offset, created_at)
        SELECT p_partition, u.h, v_next + u.i - 1, p_now
          FROM unnest(p_hashes) WITH ORDINALITY AS u(h, i)
        ON CONFLICT DO NOTHING
        RETURNING 1)
    SELECT count(*) INTO v_new FROM ins;

    IF v_new = v_total THEN
        INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count,
                                    first_at, last_at, byte_size, frames)
        VALUES (p_partition, v_next, v_next + v_total - 1, v_total,
                p_first_at, p_last_at, length(p_blob), p_blob);
        UPDATE lethe.partitions SET next_offset = v_next + v_total, last_push_at = p_now
         WHERE id = p_partition;
        base_offset := v_next;
        dup_idx := '{}';
        dup_offsets := '{}';
        RETURN;
    END IF;

    -- Some positions are duplicates: of a hash stored before this call
    -- (offsets only grow, so its offset is below v_next) or of an earlier
    -- position in this batch. Keep the first occurrence of each new hash,
    -- renumber the kept ones, and answer the duplicates with the offset
    -- their hash is stored at.
    SELECT coalesce(array_agg(d.i ORDER BY d.i), '{}') INTO v_fresh
      FROM (SELECT u.i::int AS i, u.h, row_number() OVER (PARTITION BY u.h ORDER BY u.i) AS nth
              FROM unnest(p_hashes) WITH ORDINALITY AS u(h, i)) d
     WHERE d.nth = 1
       AND NOT EXISTS (SELECT 1 FROM lethe.txns t
                        WHERE t.partition_id = p_partition AND t.txn_hash = d.h AND t.msg_offset < v_next);
    v_new := cardinality(v_fresh);

    UPDATE lethe.txns t SET msg_offset = v_next + x.ord - 1
      FROM unnest(v_fresh) WITH ORDINALITY AS x(i, ord)
     WHERE t.partition_id = p_partition AND t.txn_hash = p_hashes[x.i];

    SELECT coalesce(array_agg(u.i::int ORDER BY u.i), '{}'), coalesce(array_agg(t.msg_offset ORDER BY u.i), '{}')
      INTO dup_idx, dup_offsets
      FROM unnest(p_hashes) WITH ORDINALITY AS u(h, i)
      JOIN lethe.txns t ON t.partition_id = p_partition AND t.txn_hash = u.h
     WHERE NOT (u.i::int = ANY (v_fresh));

    IF v_new = 0 THEN
        base_offset := NULL;
        RETURN;
    END IF;

    SELECT string_agg(substring(p_blob FROM s.pos FOR s.len), ''::bytea ORDER BY s.i) INTO v_keep
      FROM (SELECT u.i::int AS i, u.len, (sum(u.len) OVER (ORDER BY u.i) - u.len + 1)::int AS pos
              FROM unnest(p_lens) WITH ORDINALITY AS u(len, i)) s
     WHERE s.i = ANY (v_fresh);

    INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count,
                                first_at, last_at, byte_size, frames)
    VALUES (p_partition, v_next, v_next + v_new - 1, v_new,
            p_first_at, p_last_at, length(v_keep), v_keep);
    UPDATE lethe.partitions SET next_offset = v_next + v_new, last_push_at = p_now
     WHERE id = p_partition;
    base_offset := v_next;
END $$;

REVOKE ALL ON FUNCTION lethe.append(uuid, bigint[], int[], bytea, timestamptz, timestamptz, timestamptz) FROM PUBLIC;
