-- The trigger: a step's row becomes part of its decision's row. The
-- losses go to lethe.retention_losses first (a refused loss fails the
-- statement). Then the decision's row, if the cycle already wrote one for
-- this queue and rule, takes the step's figures and the row is not
-- inserted; else the row is inserted as the decision's first step.
-- Only the retention loop writes, one statement at a time under its
-- advisory lock, so two steps never race for the same decision.
CREATE OR REPLACE FUNCTION lethe.fold_history_row() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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
REVOKE ALL ON FUNCTION lethe.fold_history_row() FROM PUBLIC;

-- Folds one step's losses (lethe.unread_losses' answer for one
-- partition) into the loss rows of its decision, one per group.
CREATE OR REPLACE FUNCTION lethe.fold_losses(p_at timestamp with time zone, p_queue text, p_rule text, p_partition uuid, p_name text, p_lost jsonb) RETURNS void
    LANGUAGE sql
    AS $$
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
REVOKE ALL ON FUNCTION lethe.fold_losses(p_at timestamp with time zone, p_queue text, p_rule text, p_partition uuid, p_name text, p_lost jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION lethe.fold_reclaim_row() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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
REVOKE ALL ON FUNCTION lethe.fold_reclaim_row() FROM PUBLIC;

-- Adds one partition's range to a decision's ranges: widened when the
-- partition is listed, added while the list holds fewer than 16
-- partitions and under 256 bytes, else left as it is (the decision's
-- partitions still counts it).
CREATE OR REPLACE FUNCTION lethe.history_ranges_add(p_ranges jsonb, p_name text, p_from bigint, p_to bigint, p_messages bigint) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$
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
REVOKE ALL ON FUNCTION lethe.history_ranges_add(p_ranges jsonb, p_name text, p_from bigint, p_to bigint, p_messages bigint) FROM PUBLIC;

DROP TRIGGER IF EXISTS reclaim_history_fold ON lethe.reclaim_history;
CREATE TRIGGER reclaim_history_fold BEFORE INSERT ON lethe.reclaim_history FOR EACH ROW EXECUTE FUNCTION lethe.fold_reclaim_row();

DROP TRIGGER IF EXISTS retention_history_fold ON lethe.retention_history;
CREATE TRIGGER retention_history_fold BEFORE INSERT ON lethe.retention_history FOR EACH ROW EXECUTE FUNCTION lethe.fold_history_row();
