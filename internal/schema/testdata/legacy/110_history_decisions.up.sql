-- The retention history keeps one row per decision, not per step (issue
-- 12): one row per (queue, rule, cycle), with the partitions it covered
-- folded in, and one row per (queue, rule, cycle, consumer group) that
-- lost unread data, in lethe.retention_losses.
--
-- Every writer keeps inserting one row per step and rule, as before
-- (lethe.sweep_step, settle_step, drop_partition_step, cleanup_partition
-- and anything written later): a BEFORE INSERT trigger folds that row
-- into the decision's row, in the same statement and so in the same
-- transaction as the step's delete. A cycle killed half-way leaves the
-- rows of every step it committed, and nothing else. The cycle is the
-- row's executed_at: every step of a cycle passes the cycle's one reading
-- of the clock. The folding update changes no indexed column, and the
-- table keeps room on its pages (fillfactor 70), so it is a HOT update
-- of the page the row was inserted into.
--
-- Nothing existing is rewritten: the new columns have constant defaults
-- (a catalog change), the fillfactor applies to pages filled from now on,
-- and lethe.retention_losses is a new table. Rows written before this
-- migration keep their meaning: one partition each (partitions = 1,
-- ranges NULL), their losses in their own lost column.

ALTER TABLE lethe.retention_history
    -- How many partitions the decision covered (each step's partition,
    -- counted once while its steps follow each other).
    ADD COLUMN partitions int NOT NULL DEFAULT 1,
    -- {partition name: [from offset, to offset, messages]} for the first
    -- partitions the decision covered, at most 16 and about 256 bytes;
    -- NULL on rows written before this migration (one partition each,
    -- in partition_name, from_offset, to_offset).
    ADD COLUMN ranges jsonb,
    -- The partition of the latest step folded in.
    ADD COLUMN last_partition uuid;
ALTER TABLE lethe.retention_history SET (fillfactor = 90);

-- What one consumer group lost unread by one rule in one cycle of one
-- queue: messages and leased are exact sums over the partitions; the
-- offsets are those of the first partition (partition_name), ranges lists
-- the first partitions as the history does. Only retentionSeconds and
-- maxWaitTimeSeconds may lose unread data: the check refuses any other
-- rule's loss, and with it the statement of the step that would delete.
CREATE TABLE lethe.retention_losses (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    executed_at    timestamptz NOT NULL,
    queue_name     text   NOT NULL,
    rule           text   NOT NULL,
    group_name     text   NOT NULL,
    messages       bigint NOT NULL,
    leased         bigint NOT NULL,
    partitions     int    NOT NULL,
    partition_name text   NOT NULL,
    partition_id   uuid   NOT NULL,
    from_offset    bigint,
    to_offset      bigint,
    ranges         jsonb  NOT NULL,
    last_partition uuid   NOT NULL,
    CONSTRAINT retention_losses_only_time_rules_lose CHECK (rule IN ('retention', 'max_wait')),
    CONSTRAINT retention_losses_decision_key UNIQUE (executed_at, queue_name, rule, group_name)
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000);

-- Adds one partition's range to a decision's ranges: widened when the
-- partition is listed, added while the list holds fewer than 16
-- partitions and under 256 bytes, else left as it is (the decision's
-- partitions still counts it).
CREATE FUNCTION lethe.history_ranges_add(p_ranges jsonb, p_name text, p_from bigint, p_to bigint, p_messages bigint)
RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN p_ranges ? p_name THEN
            jsonb_set(p_ranges, ARRAY[p_name], jsonb_build_array(
                least((p_ranges -> p_name ->> 0)::bigint, p_from),
                greatest((p_ranges -> p_name ->> 1)::bigint, p_to),
                (p_ranges -> p_name ->> 2)::bigint + p_messages))
        WHEN (SELECT count(*) FROM jsonb_object_keys(p_ranges)) < 16 AND pg_column_size(p_ranges) < 256 THEN
            p_ranges || jsonb_build_object(p_name, jsonb_build_array(p_from, p_to, p_messages))
        ELSE p_ranges
    END
$$;

-- Folds one step's losses (lethe.unread_losses' answer for one
-- partition) into the loss rows of its decision, one per group.
CREATE FUNCTION lethe.fold_losses(p_at timestamptz, p_queue text, p_rule text, p_partition uuid, p_name text,
                                  p_lost jsonb) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO lethe.retention_losses AS l (executed_at, queue_name, rule, group_name, messages, leased, partitions,
                                             partition_name, partition_id, from_offset, to_offset, ranges, last_partition)
    SELECT p_at, p_queue, p_rule, g ->> 'group', (g ->> 'messages')::bigint, coalesce((g ->> 'leased')::bigint, 0), 1,
           p_name, p_partition, (g ->> 'fromOffset')::bigint, (g ->> 'toOffset')::bigint,
           jsonb_build_object(p_name, jsonb_build_array((g ->> 'fromOffset')::bigint, (g ->> 'toOffset')::bigint,
                                                        (g ->> 'messages')::bigint)),
           p_partition
      FROM jsonb_array_elements(p_lost) AS g
    ON CONFLICT (executed_at, queue_name, rule, group_name) DO UPDATE SET
        messages    = l.messages + EXCLUDED.messages,
        leased      = l.leased + EXCLUDED.leased,
        from_offset = CASE WHEN l.partition_id = EXCLUDED.partition_id
                           THEN least(l.from_offset, EXCLUDED.from_offset) ELSE l.from_offset END,
        to_offset   = CASE WHEN l.partition_id = EXCLUDED.partition_id
                           THEN greatest(l.to_offset, EXCLUDED.to_offset) ELSE l.to_offset END,
        partitions  = l.partitions + CASE WHEN l.last_partition = EXCLUDED.partition_id
                                            OR l.ranges ? EXCLUDED.partition_name THEN 0 ELSE 1 END,
        ranges      = lethe.history_ranges_add(l.ranges, EXCLUDED.partition_name, EXCLUDED.from_offset,
                                               EXCLUDED.to_offset, EXCLUDED.messages),
        last_partition = EXCLUDED.partition_id
$$;

-- The trigger: a step's row becomes part of its decision's row. The
-- losses go to lethe.retention_losses first (a refused loss fails the
-- statement). Then the decision's row, if the cycle already wrote one for
-- this queue and rule, takes the step's figures and the row is not
-- inserted; else the row is inserted as the decision's first step.
-- Only the retention loop writes, one statement at a time under its
-- advisory lock, so two steps never race for the same decision.
CREATE FUNCTION lethe.fold_history_row() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.lost IS NOT NULL THEN
        PERFORM lethe.fold_losses(NEW.executed_at, NEW.queue_name, NEW.rule, NEW.partition_id, NEW.partition_name,
                                  NEW.lost);
        NEW.lost := NULL;
    END IF;
    UPDATE lethe.retention_history h
       SET segments    = h.segments + NEW.segments,
           frames      = h.frames + NEW.frames,
           bytes       = h.bytes + NEW.bytes,
           from_offset = CASE WHEN h.partition_id = NEW.partition_id
                              THEN least(h.from_offset, NEW.from_offset) ELSE h.from_offset END,
           to_offset   = CASE WHEN h.partition_id = NEW.partition_id
                              THEN greatest(h.to_offset, NEW.to_offset) ELSE h.to_offset END,
           partitions  = h.partitions + CASE WHEN h.last_partition = NEW.partition_id
                                               OR h.ranges ? NEW.partition_name THEN 0 ELSE 1 END,
           ranges      = lethe.history_ranges_add(h.ranges, NEW.partition_name, NEW.from_offset, NEW.to_offset,
                                                  NEW.frames),
           last_partition = NEW.partition_id
     WHERE h.queue_name = NEW.queue_name AND h.executed_at = NEW.executed_at AND h.rule = NEW.rule
       AND h.ranges IS NOT NULL;
    IF FOUND THEN
        RETURN NULL;
    END IF;
    NEW.partitions := 1;
    NEW.ranges := jsonb_build_object(NEW.partition_name, jsonb_build_array(NEW.from_offset, NEW.to_offset, NEW.frames));
    NEW.last_partition := NEW.partition_id;
    RETURN NEW;
END $$;

CREATE TRIGGER retention_history_fold BEFORE INSERT ON lethe.retention_history
    FOR EACH ROW EXECUTE FUNCTION lethe.fold_history_row();

REVOKE ALL ON FUNCTION lethe.history_ranges_add(jsonb, text, bigint, bigint, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.fold_losses(timestamptz, text, text, uuid, text, jsonb) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.fold_history_row() FROM PUBLIC;
REVOKE ALL ON lethe.retention_losses FROM PUBLIC;
