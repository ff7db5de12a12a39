-- The storage layer's set-based face (internal/store). Read models that
-- compute over many partitions in one query (consumer lag, queue sizes)
-- call these instead of reading lethe.segments, so that a new layout of the
-- log (time-partitioned segments, a held area) changes these functions and
-- internal/store, not the queries that use them. Offsets are increasing but
-- need not be contiguous: none of these assumes that a partition holds
-- every offset from its low_watermark on.

-- When the message at p_offset of a partition was created, or when the
-- first one after it was, if p_offset is not stored: the first_at of its
-- segment (one flush writes a segment, so its frames are that flush's wait
-- apart), read without decoding frames. NULL when nothing is stored at or
-- after p_offset. Two index probes: the segment at or before the offset,
-- else the first after it.
CREATE FUNCTION lethe.store_time_at(p_partition uuid, p_offset bigint) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        (SELECT CASE WHEN h.last_offset >= p_offset THEN h.first_at END
           FROM (SELECT s.last_offset, s.first_at FROM lethe.segments s
                  WHERE s.partition_id = p_partition AND s.base_offset <= p_offset
                  ORDER BY s.base_offset DESC LIMIT 1) h),
        (SELECT s.first_at FROM lethe.segments s
          WHERE s.partition_id = p_partition AND s.base_offset > p_offset
          ORDER BY s.base_offset LIMIT 1))
$$;

-- The first offset of the first stored segment holding a message created at
-- or after p_at (segment granularity: the segment's first offset), or NULL.
CREATE FUNCTION lethe.store_offset_since(p_partition uuid, p_at timestamptz) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT min(s.base_offset) FROM lethe.segments s
     WHERE s.partition_id = p_partition AND s.last_at >= p_at
$$;

-- What a partition stores: messages, segments, and frame bytes as written
-- (before compression).
CREATE FUNCTION lethe.store_partition_stats(
    p_partition uuid, OUT messages bigint, OUT segments bigint, OUT bytes bigint)
LANGUAGE sql STABLE AS $$
    SELECT coalesce(sum(s.frame_count), 0)::bigint, count(*), coalesce(sum(s.byte_size), 0)::bigint
      FROM lethe.segments s WHERE s.partition_id = p_partition
$$;

-- The on-disk size of the stored log (table, TOAST and indexes):
-- compressed, and cheap to read (no scan).
CREATE FUNCTION lethe.store_disk_bytes() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT pg_total_relation_size('lethe.segments')
$$;

REVOKE ALL ON FUNCTION lethe.store_time_at(uuid, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.store_offset_since(uuid, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.store_partition_stats(uuid) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.store_disk_bytes() FROM PUBLIC;
