-- Autovacuum (and fillfactor) settings of lethe's high-churn tables, in one
-- place: lethe.apply_table_settings. docs/retention.md ("Vacuum") gives the
-- reasoning for each table.
--
-- A partitioned table takes no storage parameters, and a partition does not
-- inherit them from its parent: each partition (each leaf of the tree) must
-- get them itself. Whoever creates a partition of one of these tables calls
-- lethe.apply_table_settings on it (or on the parent, which reapplies them
-- to every leaf). The settings are chosen by the table at the root of the
-- partition tree, so a partition in any schema gets its parent's.
--
-- ALTER TABLE ... SET of these parameters takes SHARE UPDATE EXCLUSIVE: it
-- waits for a running VACUUM, never blocks reads or writes, and rewrites
-- nothing (fillfactor applies to pages filled from now on).

-- The settings of one table, by the name of the root of its partition tree
-- in schema lethe; NULL for a table lethe leaves at the server's defaults.
-- A table with no TOAST table ignores the toast.* ones.
CREATE FUNCTION lethe.table_settings(p_root_schema text, p_root_name text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_root_schema <> 'lethe' THEN NULL
        -- Appended at the tail, deleted from the head by retention: vacuum
        -- once 5% of the rows are dead, so the space of deleted segments is
        -- reused by the next ones instead of growing the files (the default
        -- 20% lets a fifth of the window pile up as dead rows). The frames
        -- live in the TOAST table, which is vacuumed on its own counters.
        WHEN p_root_name = 'segments' THEN
            'autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_threshold = 500, '
            'toast.autovacuum_vacuum_scale_factor = 0.05, toast.autovacuum_vacuum_threshold = 500'
        -- The hash sidecar: one row per segment, purged from the head. Its
        -- GIN index frees an entry only when vacuum removes it, and the
        -- hashes are random keys spread over the whole index, so vacuum
        -- early (2%) for freed entries to be reused before new pages split.
        WHEN p_root_name = 'txns' THEN
            'autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 500, '
            'toast.autovacuum_vacuum_scale_factor = 0.05, toast.autovacuum_vacuum_threshold = 500'
        -- A few rows (partitions x groups), each updated by every pop and
        -- ack: vacuum as soon as 100 rows are dead, without cost-based
        -- pauses (the table is a few pages). fillfactor leaves room on each
        -- page for a new version next to the old one (a HOT update), which
        -- pays off once no indexed column changes on pop and ack.
        WHEN p_root_name = 'cursors' THEN
            'fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 100, '
            'autovacuum_vacuum_cost_delay = 0, '
            'toast.autovacuum_vacuum_scale_factor = 0, toast.autovacuum_vacuum_threshold = 100'
        -- One row per partition, updated by every append (next_offset,
        -- last_push_at: not indexed, so HOT): same as cursors.
        WHEN p_root_name = 'partitions' THEN
            'fillfactor = 70, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 100, '
            'autovacuum_vacuum_cost_delay = 0'
        -- Insert-only audit, deleted a day at a time by the metrics purge
        -- (1/90 of the table with METRICS_RETENTION_DAYS at 90): at the
        -- default 20% the dead days would pile up for 18 days before a
        -- vacuum makes their space reusable; at 1% each purged day is.
        WHEN p_root_name IN ('retention_history', 'retention_runs') THEN
            'autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000'
    END
$$;

-- Applies lethe's settings to p_table: to the table itself, or, for a
-- partitioned table, to every leaf partition under it. Answers how many
-- tables it altered (0 for a table lethe leaves at the defaults).
CREATE FUNCTION lethe.apply_table_settings(p_table regclass) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    v_root     regclass := coalesce(pg_catalog.pg_partition_root(p_table), p_table);
    v_schema   text;
    v_name     text;
    v_settings text;
    v_leaf     regclass;
    v_n        int := 0;
BEGIN
    SELECT n.nspname, c.relname INTO v_schema, v_name
      FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = v_root;
    v_settings := lethe.table_settings(v_schema, v_name);
    IF v_settings IS NULL THEN
        RETURN 0;
    END IF;
    -- pg_partition_tree lists a plain table as nothing, a partitioned one
    -- as itself and everything under it.
    FOR v_leaf IN
        SELECT p_table WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_partition_tree(p_table))
        UNION ALL
        SELECT t.relid FROM pg_catalog.pg_partition_tree(p_table) t WHERE t.isleaf
    LOOP
        EXECUTE format('ALTER TABLE %s SET (%s)', v_leaf, v_settings);
        v_n := v_n + 1;
    END LOOP;
    RETURN v_n;
END $$;

REVOKE ALL ON FUNCTION lethe.table_settings(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.apply_table_settings(regclass) FROM PUBLIC;

SELECT lethe.apply_table_settings(t)
  FROM unnest(ARRAY['lethe.segments', 'lethe.txns', 'lethe.cursors', 'lethe.partitions',
                    'lethe.retention_history', 'lethe.retention_runs']::regclass[]) AS t;
