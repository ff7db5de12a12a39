-- lethe.tier_keeps without a query inside it, so the planner inlines it
-- (and lethe.settle_action around it) into the statements that call it.
--
-- tier_keeps (050) read the leaf's end from lethe.leaf_range, a SQL
-- function called in FROM: it is never inlined, so every call parsed and
-- planned leaf_range's body (with the sidecar's span query in it, 130)
-- afresh. lethe.settle_step calls settle_action once per segment it walks,
-- and tier_change_preview once per segment of a queue: 0.3 to 1 ms each
-- on a busy two-core machine, about what moving a small segment costs.
-- The end of a segment tier's leaf is now one expression; a test holds it
-- equal to leaf_range's hi for every segment tier.

-- The end of the leaf of segment tier p_tier ('1w', '3w', '7w', 'forever'
-- or 'held') holding p_at: lethe.leaf_range's hi, as one expression.
CREATE FUNCTION lethe.segment_leaf_hi(p_tier text, p_at timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE AS $$
    SELECT (date_trunc(CASE p_tier WHEN '1w' THEN 'day' WHEN '3w' THEN 'week' WHEN '7w' THEN 'week' ELSE 'month' END,
                       p_at AT TIME ZONE 'UTC')
            + CASE p_tier WHEN '1w' THEN interval '1 day' WHEN '3w' THEN interval '7 days'
                          WHEN '7w' THEN interval '7 days' ELSE interval '1 month' END) AT TIME ZONE 'UTC'
$$;

-- Whether tier p_tier still keeps data appended at p_at, as in 050.
CREATE OR REPLACE FUNCTION lethe.tier_keeps(p_tier text, p_at timestamptz, p_now timestamptz) RETURNS bool
LANGUAGE sql STABLE AS $$
    SELECT p_tier = 'forever' OR lethe.segment_leaf_hi(p_tier, p_at) > p_now - lethe.tier_window(p_tier)
$$;

REVOKE ALL ON FUNCTION lethe.segment_leaf_hi(text, timestamptz) FROM PUBLIC;
