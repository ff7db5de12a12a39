-- Tier changes: the one definition of what setting a queue's tier does
-- (docs/retention.md, "Changing a tier"), shared by configure, apply,
-- confirm and the retention loop finishing a change.

-- Tiers in order of the window they keep.
CREATE FUNCTION lethe.tier_rank(p_tier text) RETURNS int
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE p_tier WHEN '1w' THEN 1 WHEN '3w' THEN 2 WHEN '7w' THEN 3 WHEN 'forever' THEN 4 END
$$;

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
CREATE FUNCTION lethe.request_tier(p_queue bigint, p_tier text, p_now timestamptz)
RETURNS TABLE (outcome text, from_tier text, to_tier text, state text,
               delete_messages bigint, delete_bytes bigint, move_messages bigint, move_bytes bigint,
               hold_messages bigint, hold_bytes bigint)
LANGUAGE plpgsql AS $$
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

-- Confirms the change awaiting confirmation on queue p_queue: the queue
-- takes the new tier and the change runs. Its counts are computed again
-- now, so the answer says what it will do. Answers no row when no change
-- awaits confirmation.
CREATE FUNCTION lethe.confirm_tier(p_queue bigint, p_now timestamptz)
RETURNS TABLE (from_tier text, to_tier text, delete_messages bigint, delete_bytes bigint,
               move_messages bigint, move_bytes bigint, hold_messages bigint, hold_bytes bigint)
LANGUAGE plpgsql AS $$
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

-- Finishes queue p_queue's running change when none of its segments is
-- left outside its tier and the held area: done, then a value that waited
-- is requested. Answers whether it finished.
CREATE FUNCTION lethe.finish_tier_change(p_queue bigint, p_now timestamptz) RETURNS bool
LANGUAGE plpgsql AS $$
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

REVOKE ALL ON FUNCTION lethe.tier_rank(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.request_tier(bigint, text, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.confirm_tier(bigint, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.finish_tier_change(bigint, timestamptz) FROM PUBLIC;
