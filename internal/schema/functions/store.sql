-- The on-disk size of the stored log: every leaf, with TOAST and indexes.
CREATE OR REPLACE FUNCTION lethe.store_disk_bytes() RETURNS bigint
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce(sum(pg_total_relation_size(t.relid)), 0)::bigint
      FROM pg_partition_tree('lethe.segments') t WHERE t.isleaf
$$;
REVOKE ALL ON FUNCTION lethe.store_disk_bytes() FROM PUBLIC;

-- The newest frame time of the segment holding p_offset, or of the first
-- segment after it when p_offset is not stored (below the head, or in a
-- gap), or NULL when nothing at or after p_offset is stored.
CREATE OR REPLACE FUNCTION lethe.store_judged_at(p_partition uuid, p_offset bigint) RETURNS timestamp with time zone
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
REVOKE ALL ON FUNCTION lethe.store_judged_at(p_partition uuid, p_offset bigint) FROM PUBLIC;

-- lethe.store_offset_since looks from the tail first, as store.OffsetAt
-- does (internal/store/lookup.go): the lag of a group that has not popped a
-- partition yet (lethe.group_lag) then costs what was appended since its
-- start, not a scan of the partition's whole history on every status call
-- and metrics scrape.
--
-- It rests on two facts of every append (lethe.append, lethe.append_group):
-- a segment's appended_at is never earlier than its frames' creation times,
-- and never earlier than the segment before it. So the first segment
-- appended before p_at, read backwards, ends the search. A segment of the
-- legacy leaf (from before tiers) (appended_at -infinity, frames of any time), or more
-- than 1,000 segments appended since, falls back to the scan from the head
-- (which stops at the first segment that answers).
CREATE OR REPLACE FUNCTION lethe.store_offset_since(p_partition uuid, p_at timestamp with time zone) RETURNS bigint
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
REVOKE ALL ON FUNCTION lethe.store_offset_since(p_partition uuid, p_at timestamp with time zone) FROM PUBLIC;

-- What a partition stores: messages, segments, and frame bytes as written
-- (before compression).
CREATE OR REPLACE FUNCTION lethe.store_partition_stats(p_partition uuid, OUT messages bigint, OUT segments bigint, OUT bytes bigint) RETURNS record
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce(sum(s.frame_count), 0)::bigint, count(*), coalesce(sum(s.byte_size), 0)::bigint
      FROM lethe.segments s WHERE s.partition_id = p_partition
$$;
REVOKE ALL ON FUNCTION lethe.store_partition_stats(p_partition uuid, OUT messages bigint, OUT segments bigint, OUT bytes bigint) FROM PUBLIC;

-- When the message at p_offset of a partition was created, or when the
-- first one after it was, if p_offset is not stored: the first_at of its
-- segment (one flush writes a segment, so its frames are that flush's wait
-- apart), read without decoding frames. NULL when nothing is stored at or
-- after p_offset. Two index probes: the segment at or before the offset,
-- else the first after it.
CREATE OR REPLACE FUNCTION lethe.store_time_at(p_partition uuid, p_offset bigint) RETURNS timestamp with time zone
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
REVOKE ALL ON FUNCTION lethe.store_time_at(p_partition uuid, p_offset bigint) FROM PUBLIC;
