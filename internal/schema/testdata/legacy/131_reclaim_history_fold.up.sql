-- The reclaim phase's audit, one row per decision, as the retention
-- history's (migration 110): a reclaimer's step writes a row of what it
-- deleted, and a cycle runs as many steps as the backlog needs
-- (RETENTION_BATCH_SIZE rows each), so a steady trace load wrote a row per
-- thousand traces, kept METRICS_RETENTION_DAYS. Now the cycle's first step
-- of a (rule, subject) inserts the row and its later steps add to it: rows
-- summed, the time range widened, steps counted (each step is still
-- bounded by RETENTION_BATCH_SIZE rows: steps says how many it took).
-- executed_at is the cycle's one clock
-- reading, the same for every step of a cycle.
--
-- Only the retention loop writes here, one statement at a time under its
-- advisory lock, so two steps never race for the same row.
ALTER TABLE lethe.reclaim_history ADD COLUMN steps int NOT NULL DEFAULT 1;

CREATE FUNCTION lethe.fold_reclaim_row() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE lethe.reclaim_history h
       SET rows   = h.rows + NEW.rows,
           steps  = h.steps + 1,
           oldest = least(h.oldest, NEW.oldest),
           newest = greatest(h.newest, NEW.newest)
     WHERE h.executed_at = NEW.executed_at AND h.rule = NEW.rule AND h.subject = NEW.subject;
    IF FOUND THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER reclaim_history_fold BEFORE INSERT ON lethe.reclaim_history
    FOR EACH ROW EXECUTE FUNCTION lethe.fold_reclaim_row();

-- The fold's updates change no indexed column: heap-only, with room left
-- on the page for them.
ALTER TABLE lethe.reclaim_history SET (fillfactor = 90);

REVOKE ALL ON FUNCTION lethe.fold_reclaim_row() FROM PUBLIC;
