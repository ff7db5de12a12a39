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
-- pre-050 legacy leaf (appended_at -infinity, frames of any time), or more
-- than 1,000 segments appended since, falls back to the scan from the head
-- (which stops at the first segment that answers).
CREATE OR REPLACE FUNCTION lethe.store_offset_since(p_partition uuid, p_at timestamptz) RETURNS bigint
LANGUAGE plpgsql STABLE AS $$
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

REVOKE ALL ON FUNCTION lethe.store_offset_since(uuid, timestamptz) FROM PUBLIC;
