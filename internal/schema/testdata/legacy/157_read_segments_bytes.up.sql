-- lethe.read_segments with a byte bound: the segments holding up to p_limit
-- frames from offset p_from on, and no segment whose bytes before it
-- (byte_size, cumulative from the first segment read) reach p_max_bytes.
-- The first segment always comes, so a message larger than the bound is
-- still read. A pop's answer is bounded in bytes as well as in messages
-- (POP_MAX_BYTES): without this, a batch of large messages was read whole
-- (a pop of 200 messages of 3.5 MiB held 2 GiB of lethe's memory).
--
-- The three-argument function of migration 156 stays for replicas of the
-- previous version during a rolling upgrade. Like it, this one is a plain
-- SQL function, STABLE and not STRICT, so the planner inlines it, and
-- segments past the bounds are never detoasted.
CREATE FUNCTION lethe.read_segments(p_partition uuid, p_from bigint, p_limit int, p_max_bytes bigint)
RETURNS TABLE (base_offset bigint, last_offset bigint, last_at timestamptz, frames bytea)
LANGUAGE sql STABLE AS $$
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

REVOKE ALL ON FUNCTION lethe.read_segments(uuid, bigint, int, bigint) FROM PUBLIC;
