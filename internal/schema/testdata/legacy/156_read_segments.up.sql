-- lethe.read_segments is the read of a partition (store.Read): the
-- segments holding up to p_limit frames from offset p_from on. It lives in
-- the database so that a claim can read in the statement that locks its
-- cursor (engine.lockFirstFree, LATERAL): a pop of waiting messages was
-- four round trips (candidates; lock; read; update and commit), now three.
--
-- A plain SQL function, STABLE and not STRICT, so the planner inlines it:
-- the plan is the statement's own. The bound on base_offset is a scalar
-- subquery, an init plan whose value is an index condition on every leaf's
-- primary key. Joined to the CTE instead, the bound was only a join filter:
-- each read walked the partition's segments from its first offset, so its
-- cost grew with the partition (360 buffers a pop at the tail of
-- a short log). It reads only as many segments as the cumulative frame
-- count needs, so a large batch does not detoast segments it will not use.
CREATE FUNCTION lethe.read_segments(p_partition uuid, p_from bigint, p_limit int)
RETURNS TABLE (base_offset bigint, last_offset bigint, last_at timestamptz, frames bytea)
LANGUAGE sql STABLE AS $$
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

REVOKE ALL ON FUNCTION lethe.read_segments(uuid, bigint, int) FROM PUBLIC;
