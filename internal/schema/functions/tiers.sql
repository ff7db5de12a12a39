-- Confirms the change awaiting confirmation on queue p_queue: the queue
-- takes the new tier and the change runs. Its counts are computed again
-- now, so the answer says what it will do. Answers no row when no change
-- awaits confirmation.
CREATE OR REPLACE FUNCTION lethe.confirm_tier(p_queue bigint, p_now timestamp with time zone) RETURNS TABLE(from_tier text, to_tier text, delete_messages bigint, delete_bytes bigint, move_messages bigint, move_bytes bigint, hold_messages bigint, hold_bytes bigint)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_to text;
    r    record;
BEGIN
    PERFORM 1 FROM lethe.queues q WHERE q.id = p_queue FOR UPDATE;
    SELECT rc.to_tier INTO v_to FROM lethe.retention_changes rc
     WHERE rc.queue_id = p_queue AND rc.state = 'awaiting_confirm';
    IF NOT FOUND THEN
        RETURN;
    END IF;
    UPDATE lethe.retention_changes rc
       SET delete_messages = 0, delete_bytes = 0, move_messages = 0, move_bytes = 0, hold_messages = 0, hold_bytes = 0
     WHERE rc.queue_id = p_queue;
    FOR r IN SELECT * FROM lethe.tier_change_preview(p_queue, v_to, p_now) LOOP
        UPDATE lethe.retention_changes rc
           SET delete_messages = CASE WHEN r.action = 'drop' THEN r.frames ELSE rc.delete_messages END,
               delete_bytes = CASE WHEN r.action = 'drop' THEN r.bytes ELSE rc.delete_bytes END,
               move_messages = CASE WHEN r.action = 'move' THEN r.frames ELSE rc.move_messages END,
               move_bytes = CASE WHEN r.action = 'move' THEN r.bytes ELSE rc.move_bytes END,
               hold_messages = CASE WHEN r.action = 'hold' THEN r.frames ELSE rc.hold_messages END,
               hold_bytes = CASE WHEN r.action = 'hold' THEN r.bytes ELSE rc.hold_bytes END
         WHERE rc.queue_id = p_queue;
    END LOOP;
    UPDATE lethe.retention_changes rc SET state = 'running', confirmed_at = p_now, updated_at = p_now
     WHERE rc.queue_id = p_queue;
    UPDATE lethe.queues q SET retention_tier = v_to, updated_at = p_now WHERE q.id = p_queue;
    RETURN QUERY SELECT rc.from_tier, rc.to_tier, rc.delete_messages, rc.delete_bytes, rc.move_messages,
                        rc.move_bytes, rc.hold_messages, rc.hold_bytes
                   FROM lethe.retention_changes rc WHERE rc.queue_id = p_queue;
END $$;
REVOKE ALL ON FUNCTION lethe.confirm_tier(p_queue bigint, p_now timestamp with time zone) FROM PUBLIC;

-- One bounded step of dropping a detached leaf, for one partition it held:
-- with quarantined: purge, up to p_batch dead letters of the messages the
-- leaf held (quarantine_purge; done is false while more are left); then
-- the audit row of what the drop removes (p_rule: tier_drop or held_drop),
-- the low watermark moved past it under the partition row lock, and the
-- progress recorded in lethe.leaves, in one transaction.
CREATE OR REPLACE FUNCTION lethe.drop_partition_step(p_leaf text, p_partition uuid, p_rule text, p_batch integer, p_now timestamp with time zone) RETURNS TABLE(segments integer, frames bigint, bytes bigint, dead_letters integer, done boolean)
    LANGUAGE plpgsql
    AS $_$
DECLARE
    v_queue  text;
    v_name   text;
    v_purge  bool;
    v_dl     int := 0;
    v_segs   int;
    v_frames bigint;
    v_bytes  bigint;
    v_lo     bigint;
    v_hi     bigint;
BEGIN
    SELECT q.name, p.name, q.quarantined = 'purge' INTO v_queue, v_name, v_purge
      FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
     WHERE p.id = p_partition
       FOR UPDATE OF p;
    IF FOUND AND v_purge THEN
        EXECUTE format(
            'DELETE FROM lethe.dead_letters d WHERE d.id IN (
                 SELECT d2.id FROM lethe.dead_letters d2 JOIN lethe.%I s
                     ON s.partition_id = d2.partition_id AND d2.msg_offset BETWEEN s.base_offset AND s.last_offset
                  WHERE d2.partition_id = $1 LIMIT $2)', p_leaf) USING p_partition, p_batch;
        GET DIAGNOSTICS v_dl = ROW_COUNT;
        IF v_dl > 0 THEN
            INSERT INTO lethe.retention_history (executed_at, queue_name, partition_name, partition_id, rule,
                                                 segments, frames, bytes)
            VALUES (p_now, v_queue, v_name, p_partition, 'quarantine_purge', 0, v_dl, 0);
        END IF;
        IF v_dl >= p_batch THEN
            RETURN QUERY SELECT 0, 0::bigint, 0::bigint, v_dl, false;
            RETURN;
        END IF;
    END IF;
    EXECUTE format('SELECT count(*)::int, coalesce(sum(s.frame_count), 0)::bigint, coalesce(sum(s.byte_size), 0)::bigint,
                           min(s.base_offset), max(s.last_offset)
                      FROM lethe.%I s WHERE s.partition_id = $1', p_leaf)
       INTO v_segs, v_frames, v_bytes, v_lo, v_hi USING p_partition;
    IF v_queue IS NOT NULL AND v_segs > 0 THEN
        INSERT INTO lethe.retention_history (executed_at, queue_name, partition_name, partition_id, rule,
                                             segments, frames, bytes, from_offset, to_offset)
        VALUES (p_now, v_queue, v_name, p_partition, p_rule, v_segs, v_frames, v_bytes, v_lo, v_hi);
        UPDATE lethe.partitions p
           SET low_watermark = greatest(p.low_watermark,
                   coalesce((SELECT min(s.base_offset) FROM lethe.segments s WHERE s.partition_id = p_partition),
                            p.next_offset))
         WHERE p.id = p_partition;
    END IF;
    UPDATE lethe.leaves SET audited_through = p_partition WHERE name = p_leaf;
    RETURN QUERY SELECT v_segs, v_frames, v_bytes, v_dl, true;
END $_$;
REVOKE ALL ON FUNCTION lethe.drop_partition_step(p_leaf text, p_partition uuid, p_rule text, p_batch integer, p_now timestamp with time zone) FROM PUBLIC;

-- Finishes queue p_queue's running change when none of its segments is
-- left outside its tier and the held area: done, then a value that waited
-- is requested. Answers whether it finished.
CREATE OR REPLACE FUNCTION lethe.finish_tier_change(p_queue bigint, p_now timestamp with time zone) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_tier text;
    v_next text;
BEGIN
    SELECT q.retention_tier INTO v_tier FROM lethe.queues q WHERE q.id = p_queue FOR UPDATE;
    SELECT rc.next_tier INTO v_next FROM lethe.retention_changes rc
     WHERE rc.queue_id = p_queue AND rc.state = 'running';
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT 1 FROM lethe.partitions p JOIN lethe.segments s ON s.partition_id = p.id
                WHERE p.queue_id = p_queue AND s.tier NOT IN (v_tier, 'held')) THEN
        RETURN false;
    END IF;
    UPDATE lethe.retention_changes rc SET state = 'done', finished_at = p_now, next_tier = NULL, updated_at = p_now
     WHERE rc.queue_id = p_queue;
    IF v_next IS NOT NULL THEN
        PERFORM lethe.request_tier(p_queue, v_next, p_now);
    END IF;
    RETURN true;
END $$;
REVOKE ALL ON FUNCTION lethe.finish_tier_change(p_queue bigint, p_now timestamp with time zone) FROM PUBLIC;

-- Asks for queue p_queue to have tier p_tier, under the queue's row lock:
--   * a change is running: the value waits (next_tier; a later value
--     replaces it, so values in between are skipped), or is dropped when
--     it is the running change's target;         -> 'queued' / 'unchanged'
--   * it is the current tier: a change awaiting confirmation is
--     withdrawn;                                     -> 'unchanged'
--   * shorter, and the queue holds data it would move or delete: not
--     applied; the change awaits confirmation with what it would do;
--                                                    -> 'awaiting_confirm'
--   * otherwise applied at once, and when data must move into the new
--     tier, a change starts running;                 -> 'started' / 'applied'
-- Answers the outcome and the change's row as it now is (NULLs when none).
CREATE OR REPLACE FUNCTION lethe.request_tier(p_queue bigint, p_tier text, p_now timestamp with time zone) RETURNS TABLE(outcome text, from_tier text, to_tier text, state text, delete_messages bigint, delete_bytes bigint, move_messages bigint, move_bytes bigint, hold_messages bigint, hold_bytes bigint)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_cur    text;
    c        lethe.retention_changes%ROWTYPE;
    v_out    text;
    v_any    bool;
    v_del    bigint := 0; v_delb  bigint := 0;
    v_move   bigint := 0; v_moveb bigint := 0;
    v_hold   bigint := 0; v_holdb bigint := 0;
    r        record;
BEGIN
    SELECT q.retention_tier INTO v_cur FROM lethe.queues q WHERE q.id = p_queue FOR UPDATE;
    SELECT * INTO c FROM lethe.retention_changes rc WHERE rc.queue_id = p_queue;
    IF c.state = 'running' THEN
        v_out := CASE WHEN p_tier = c.to_tier THEN 'unchanged' ELSE 'queued' END;
        UPDATE lethe.retention_changes rc
           SET next_tier = CASE WHEN p_tier = c.to_tier THEN NULL ELSE p_tier END, updated_at = p_now
         WHERE rc.queue_id = p_queue;
    ELSIF p_tier = v_cur THEN
        DELETE FROM lethe.retention_changes rc WHERE rc.queue_id = p_queue AND rc.state = 'awaiting_confirm';
        v_out := 'unchanged';
    ELSE
        FOR r IN SELECT * FROM lethe.tier_change_preview(p_queue, p_tier, p_now) LOOP
            CASE r.action
                WHEN 'drop' THEN v_del := r.frames; v_delb := r.bytes;
                WHEN 'move' THEN v_move := r.frames; v_moveb := r.bytes;
                WHEN 'hold' THEN v_hold := r.frames; v_holdb := r.bytes;
            END CASE;
        END LOOP;
        v_any := v_del + v_move + v_hold > 0;
        IF lethe.tier_rank(p_tier) < lethe.tier_rank(v_cur) AND v_any THEN
            v_out := 'awaiting_confirm';
        ELSE
            UPDATE lethe.queues q SET retention_tier = p_tier, updated_at = p_now WHERE q.id = p_queue;
            v_out := CASE WHEN v_any THEN 'started' ELSE 'applied' END;
        END IF;
        IF v_out = 'applied' THEN
            DELETE FROM lethe.retention_changes rc WHERE rc.queue_id = p_queue;
        ELSE
            INSERT INTO lethe.retention_changes AS rc (queue_id, from_tier, to_tier, state,
                   delete_messages, delete_bytes, move_messages, move_bytes, hold_messages, hold_bytes,
                   requested_at, confirmed_at, updated_at)
            VALUES (p_queue, v_cur, p_tier, CASE WHEN v_out = 'started' THEN 'running' ELSE 'awaiting_confirm' END,
                    v_del, v_delb, v_move, v_moveb, v_hold, v_holdb,
                    p_now, CASE WHEN v_out = 'started' THEN p_now END, p_now)
            ON CONFLICT (queue_id) DO UPDATE SET
                   from_tier = EXCLUDED.from_tier, to_tier = EXCLUDED.to_tier, state = EXCLUDED.state,
                   delete_messages = EXCLUDED.delete_messages, delete_bytes = EXCLUDED.delete_bytes,
                   move_messages = EXCLUDED.move_messages, move_bytes = EXCLUDED.move_bytes,
                   hold_messages = EXCLUDED.hold_messages, hold_bytes = EXCLUDED.hold_bytes,
                   deleted_messages = 0, moved_messages = 0, held_messages = 0, next_tier = NULL,
                   requested_at = EXCLUDED.requested_at, confirmed_at = EXCLUDED.confirmed_at,
                   finished_at = NULL, updated_at = EXCLUDED.updated_at;
        END IF;
    END IF;
    RETURN QUERY
    SELECT v_out, rc.from_tier, rc.to_tier, rc.state, rc.delete_messages, rc.delete_bytes,
           rc.move_messages, rc.move_bytes, rc.hold_messages, rc.hold_bytes
      FROM (SELECT 1) one LEFT JOIN lethe.retention_changes rc ON rc.queue_id = p_queue AND rc.state <> 'done';
END $$;
REVOKE ALL ON FUNCTION lethe.request_tier(p_queue bigint, p_tier text, p_now timestamp with time zone) FROM PUBLIC;

-- What settling a segment does, the one rule the tier check, tier changes
-- and their announcement share: 'move' into the queue's tier when that
-- tier keeps it and it is elsewhere; else 'hold' (to the held area) when
-- some group still wants a frame of it; else 'drop'. NULL: nothing to do
-- (it is in the queue's tier, which keeps it).
CREATE OR REPLACE FUNCTION lethe.settle_action(p_queue_tier text, p_seg_tier text, p_at timestamp with time zone, p_last_offset bigint, p_bound bigint, p_now timestamp with time zone) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE
        WHEN lethe.tier_keeps(p_queue_tier, p_at, p_now) THEN
             CASE WHEN p_seg_tier <> p_queue_tier THEN 'move' END
        WHEN p_last_offset >= p_bound THEN 'hold'
        ELSE 'drop'
    END
$$;
REVOKE ALL ON FUNCTION lethe.settle_action(p_queue_tier text, p_seg_tier text, p_at timestamp with time zone, p_last_offset bigint, p_bound bigint, p_now timestamp with time zone) FROM PUBLIC;

-- Where the tier check's settling of one partition in leaf p_leaf may
-- start: nothing before the segment holding the partition's consumed bound
-- can be pending, so when the queue's tier is the leaf's own (the common
-- case: nothing moves to another tier) the walk starts there, or is not
-- needed at all (NULL) when no group wants anything.
CREATE OR REPLACE FUNCTION lethe.settle_start(p_partition uuid, p_leaf text, p_leaf_tier text) RETURNS bigint
    LANGUAGE plpgsql STABLE
    AS $_$
DECLARE
    v_tier  text;
    v_bound bigint;
    v_from  bigint;
BEGIN
    SELECT q.retention_tier INTO v_tier
      FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id WHERE p.id = p_partition;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF v_tier <> p_leaf_tier THEN
        RETURN -1;
    END IF;
    v_bound := lethe.completed_bound(p_partition);
    IF v_bound IS NULL THEN
        RETURN NULL;
    END IF;
    EXECUTE format('SELECT max(s.base_offset) FROM lethe.%I s WHERE s.partition_id = $1 AND s.base_offset <= $2', p_leaf)
       INTO v_from USING p_partition, v_bound;
    RETURN coalesce(v_from, v_bound);
END $_$;
REVOKE ALL ON FUNCTION lethe.settle_start(p_partition uuid, p_leaf text, p_leaf_tier text) FROM PUBLIC;

-- One bounded step settling the segments of one partition, from offset
-- p_from on: those of the leaf p_leaf (the tier check, before the leaf is
-- dropped: 'drop' leaves them for the drop), or, when p_leaf is NULL, those
-- in the tiers p_tiers (a tier change: 'drop' deletes them, audited as
-- tier_change). Under the partition row lock, so the bound is read after
-- any cursor creation or seek committed. A moved segment keeps its offsets
-- and appended_at (the legacy leaf's '-infinity' becomes its last_at); its
-- frames are copied as stored. Answers one row per action taken (or one
-- with a NULL rule), the offset to resume from and whether the partition
-- is done.
CREATE OR REPLACE FUNCTION lethe.settle_step(p_partition uuid, p_leaf text, p_tiers text[], p_from bigint, p_batch integer, p_budget bigint, p_now timestamp with time zone) RETURNS TABLE(rule text, segments integer, frames bigint, bytes bigint, next_from bigint, done boolean)
    LANGUAGE plpgsql
    AS $_$
DECLARE
    v_queue_id bigint;
    v_queue    text;
    v_name     text;
    v_tier     text;
    v_bound    bigint;
    v_src      text := CASE WHEN p_leaf IS NULL THEN 'lethe.segments' ELSE format('lethe.%I', p_leaf) END;
    v_from     bigint := p_from;
    r          record;
    v_act      text;
    v_acts     text[]   := '{}';
    v_base     bigint[] := '{}';
    v_last     bigint[] := '{}';
    v_count    int[]    := '{}';
    v_bytes    bigint[] := '{}';
    v_walked   int := 0;
    v_taken    bigint := 0;
    v_next     bigint;
BEGIN
    SELECT q.id, q.name, p.name, q.retention_tier INTO v_queue_id, v_queue, v_name, v_tier
      FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
     WHERE p.id = p_partition
       FOR UPDATE OF p;
    IF NOT FOUND THEN
        RETURN QUERY SELECT NULL::text, 0, 0::bigint, 0::bigint, NULL::bigint, true;
        RETURN;
    END IF;
    v_bound := lethe.completed_bound(p_partition);
    FOR r IN EXECUTE format(
        'SELECT s.base_offset, s.last_offset, s.frame_count, s.byte_size, s.tier,
                CASE WHEN s.appended_at = ''-infinity'' THEN s.last_at ELSE s.appended_at END AS at
           FROM %s s
          WHERE s.partition_id = $1 AND s.base_offset >= $2 AND ($3::text[] IS NULL OR s.tier = ANY ($3))
          ORDER BY s.base_offset
          LIMIT $4', v_src) USING p_partition, v_from, p_tiers, p_batch
    LOOP
        EXIT WHEN v_taken >= p_budget;
        v_walked := v_walked + 1;
        v_next := r.base_offset + 1;
        v_act := lethe.settle_action(v_tier, r.tier, r.at, r.last_offset, v_bound, p_now);
        CONTINUE WHEN v_act IS NULL OR (v_act = 'drop' AND p_leaf IS NOT NULL);
        IF v_act = 'move' THEN
            PERFORM lethe.ensure_leaf(v_tier, r.at);
        ELSIF v_act = 'hold' THEN
            PERFORM lethe.ensure_leaf('held', r.at);
        END IF;
        v_taken := v_taken + r.byte_size;
        v_acts  := v_acts || v_act;
        v_base  := v_base || r.base_offset;
        v_last  := v_last || r.last_offset;
        v_count := v_count || r.frame_count;
        v_bytes := v_bytes || r.byte_size::bigint;
    END LOOP;

    EXECUTE format(
        'WITH m AS (DELETE FROM %s s
                     USING unnest($2::bigint[], $3::text[]) AS a(base, act)
                    WHERE s.partition_id = $1 AND s.base_offset = a.base AND a.act IN (''move'', ''hold'')
                   RETURNING s.*, a.act)
         INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count, first_at, last_at,
                                     byte_size, frames, tier, appended_at)
         SELECT m.partition_id, m.base_offset, m.last_offset, m.frame_count, m.first_at, m.last_at, m.byte_size,
                m.frames, CASE m.act WHEN ''move'' THEN $4 ELSE ''held'' END,
                CASE WHEN m.appended_at = ''-infinity'' THEN m.last_at ELSE m.appended_at END
           FROM m', v_src) USING p_partition, v_base, v_acts, v_tier;
    IF 'drop' = ANY (v_acts) THEN
        DELETE FROM lethe.segments s
         USING unnest(v_base, v_acts) AS a(base, act)
         WHERE s.partition_id = p_partition AND s.base_offset = a.base AND a.act = 'drop'
           AND s.tier = ANY (p_tiers);
        UPDATE lethe.partitions p
           SET low_watermark = greatest(p.low_watermark,
                   coalesce((SELECT min(s.base_offset) FROM lethe.segments s WHERE s.partition_id = p_partition),
                            p.next_offset))
         WHERE p.id = p_partition;
    END IF;

    INSERT INTO lethe.retention_history (executed_at, queue_name, partition_name, partition_id, rule,
                                         segments, frames, bytes, from_offset, to_offset)
    SELECT p_now, v_queue, v_name, p_partition,
           CASE a.act WHEN 'move' THEN 'tier_move' WHEN 'hold' THEN 'held_move' ELSE 'tier_change' END,
           count(*), sum(a.cnt), sum(a.bytes), min(a.base), max(a.last)
      FROM unnest(v_acts, v_base, v_last, v_count, v_bytes) AS a(act, base, last, cnt, bytes)
     GROUP BY a.act;
    IF p_leaf IS NULL THEN
        UPDATE lethe.retention_changes c
           SET moved_messages = c.moved_messages + coalesce((SELECT sum(a.cnt) FROM unnest(v_acts, v_count) AS a(act, cnt) WHERE a.act = 'move'), 0),
               held_messages = c.held_messages + coalesce((SELECT sum(a.cnt) FROM unnest(v_acts, v_count) AS a(act, cnt) WHERE a.act = 'hold'), 0),
               deleted_messages = c.deleted_messages + coalesce((SELECT sum(a.cnt) FROM unnest(v_acts, v_count) AS a(act, cnt) WHERE a.act = 'drop'), 0),
               updated_at = p_now
         WHERE c.queue_id = v_queue_id AND c.state = 'running';
    END IF;

    IF cardinality(v_acts) = 0 THEN
        RETURN QUERY SELECT NULL::text, 0, 0::bigint, 0::bigint, v_next, v_walked < p_batch AND v_taken < p_budget;
        RETURN;
    END IF;
    RETURN QUERY
    SELECT CASE a.act WHEN 'move' THEN 'tier_move' WHEN 'hold' THEN 'held_move' ELSE 'tier_change' END,
           count(*)::int, sum(a.cnt)::bigint, sum(a.bytes)::bigint, v_next, v_walked < p_batch AND v_taken < p_budget
      FROM unnest(v_acts, v_count, v_bytes) AS a(act, cnt, bytes)
     GROUP BY a.act;
END $_$;
REVOKE ALL ON FUNCTION lethe.settle_step(p_partition uuid, p_leaf text, p_tiers text[], p_from bigint, p_batch integer, p_budget bigint, p_now timestamp with time zone) FROM PUBLIC;

-- What changing queue p_queue to tier p_to would do now, by action (move,
-- hold, drop): the announcement of a tier change, with the rule the change
-- runs (lethe.settle_action). Held segments stay where they are.
CREATE OR REPLACE FUNCTION lethe.tier_change_preview(p_queue bigint, p_to text, p_now timestamp with time zone) RETURNS TABLE(action text, segments bigint, frames bigint, bytes bigint)
    LANGUAGE sql STABLE
    AS $$
    SELECT a.act, count(*), sum(a.frame_count)::bigint, sum(a.byte_size)::bigint
      FROM (SELECT lethe.settle_action(p_to, s.tier,
                       CASE WHEN s.appended_at = '-infinity' THEN s.last_at ELSE s.appended_at END,
                       s.last_offset, b.bound, p_now) AS act,
                   s.frame_count, s.byte_size
              FROM lethe.partitions p
             CROSS JOIN LATERAL (SELECT lethe.completed_bound(p.id) AS bound) b
              JOIN lethe.segments s ON s.partition_id = p.id
             WHERE p.queue_id = p_queue AND s.tier <> 'held') a
     WHERE a.act IS NOT NULL
     GROUP BY a.act
$$;
REVOKE ALL ON FUNCTION lethe.tier_change_preview(p_queue bigint, p_to text, p_now timestamp with time zone) FROM PUBLIC;
