-- A new leaf of lethe.segments or lethe.txns gets its table's autovacuum
-- settings (migration 090: a partition inherits no storage parameter from
-- its parent, so whoever creates one applies them). lethe.create_leaf as in
-- 050, plus lethe.apply_table_settings on the leaf once it is attached (its
-- root then names the settings).
--
-- Migrations run in version order and a database may have run 090 before
-- this one (a database of main before the tiers) or not yet (a database of
-- the tiers before 090): the call is skipped while the function does not
-- exist, and 090 applies the settings to every leaf present when it runs.
CREATE OR REPLACE FUNCTION lethe.create_leaf(p_tier text, p_at timestamptz) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    r        record;
    v_parent text := CASE p_tier WHEN 'txns' THEN 'txns' ELSE 'segments_' || p_tier END;
    v_have   text;
BEGIN
    SELECT * INTO r FROM lethe.leaf_range(p_tier, p_at);
    EXECUTE format('LOCK TABLE lethe.%I IN SHARE UPDATE EXCLUSIVE MODE', v_parent);
    SELECT l.name INTO v_have FROM lethe.leaves l
     WHERE l.parent = v_parent AND l.state = 'attached' AND l.lo <= p_at AND p_at < l.hi;
    IF FOUND THEN
        RETURN v_have;
    END IF;
    EXECUTE format('CREATE TABLE lethe.%I (LIKE lethe.%I INCLUDING DEFAULTS INCLUDING STORAGE INCLUDING COMPRESSION)',
                   r.name, v_parent);
    EXECUTE format('ALTER TABLE lethe.%I ADD PRIMARY KEY (partition_id, base_offset)', r.name);
    IF p_tier = 'txns' THEN
        EXECUTE format('CREATE INDEX %I ON lethe.%I USING gin (hashes) WITH (fastupdate = off)',
                       r.name || '_hashes_idx', r.name);
        EXECUTE format('ALTER TABLE lethe.%I ADD CONSTRAINT leaf_bounds CHECK (created_at >= %L AND created_at < %L)',
                       r.name, r.lo, r.hi);
    ELSE
        EXECUTE format('ALTER TABLE lethe.%I ADD CONSTRAINT leaf_bounds CHECK (tier = %L AND appended_at >= %L AND appended_at < %L)',
                       r.name, p_tier, r.lo, r.hi);
    END IF;
    EXECUTE format('ALTER TABLE lethe.%I ATTACH PARTITION lethe.%I FOR VALUES FROM (%L) TO (%L)',
                   v_parent, r.name, r.lo, r.hi);
    -- The partition constraint says the same; one check per insert is enough.
    EXECUTE format('ALTER TABLE lethe.%I DROP CONSTRAINT leaf_bounds', r.name);
    IF to_regprocedure('lethe.apply_table_settings(regclass)') IS NOT NULL THEN
        PERFORM lethe.apply_table_settings(format('lethe.%I', r.name)::regclass);
    END IF;
    INSERT INTO lethe.leaves (name, parent, tier, lo, hi) VALUES (r.name, v_parent, p_tier, r.lo, r.hi);
    RETURN r.name;
END $$;

-- The leaves 050 created before this function gave them their settings.
DO $$
BEGIN
    IF to_regprocedure('lethe.apply_table_settings(regclass)') IS NOT NULL THEN
        PERFORM lethe.apply_table_settings('lethe.segments'::regclass);
        PERFORM lethe.apply_table_settings('lethe.txns'::regclass);
    END IF;
END $$;
