-- The steps of the tier check and of tier changes (internal/retention
-- drives them, internal/store wraps them). Every step takes one partition
-- row lock (the one appends take), handles at most p_batch segments and
-- p_budget bytes of frames, writes its audit rows and commits.

-- New audit rules. None may record a loss: a tier never deletes a message
-- some group still wants (011's constraint stays).
ALTER TABLE lethe.retention_history DROP CONSTRAINT retention_history_rule_check;
ALTER TABLE lethe.retention_history ADD CONSTRAINT retention_history_rule_check
    CHECK (rule IN ('retention', 'completed_retention', 'max_wait', 'partition_cleanup',
                    'tier_drop', 'held_move', 'tier_move', 'held_drop', 'tier_change', 'quarantine_purge'));

-- A tier drop with quarantined: purge deletes the dead letters of the
-- messages the dropped leaf held.
CREATE INDEX dead_letters_partition_offset_idx ON lethe.dead_letters (partition_id, msg_offset);

-- lethe.group_positions (011) also counts the queue's required groups: a
-- group declared required and never seen (no cursor here, no
-- subscription) wants everything from the partition's first offset.
CREATE OR REPLACE FUNCTION lethe.group_positions(p_partition uuid)
RETURNS TABLE (group_name text, next_wanted bigint, lease_from bigint, lease_to bigint)
LANGUAGE sql STABLE AS $$
    SELECT c.group_name, c.committed + 1,
           CASE WHEN c.lease_id IS NOT NULL THEN c.lease_from END,
           CASE WHEN c.lease_id IS NOT NULL THEN c.lease_to END
      FROM lethe.cursors c
     WHERE c.partition_id = p_partition
    UNION ALL
    SELECT s.group_name,
           CASE WHEN s.from_at IS NULL THEN 0
                ELSE coalesce((SELECT sg.base_offset FROM lethe.segments sg
                                WHERE sg.partition_id = p.id AND sg.last_at >= s.from_at
                                ORDER BY sg.base_offset
                                LIMIT 1), p.next_offset)
           END,
           NULL, NULL
      FROM lethe.partitions p
      JOIN lethe.subscriptions s ON s.queue_id = p.queue_id
     WHERE p.id = p_partition
       AND NOT EXISTS (SELECT 1 FROM lethe.cursors c
                        WHERE c.partition_id = p.id AND c.group_name = s.group_name)
    UNION ALL
    SELECT g.name, 0, NULL, NULL
      FROM lethe.partitions p
      JOIN lethe.queues q ON q.id = p.queue_id
     CROSS JOIN LATERAL unnest(q.required_groups) AS g(name)
     WHERE p.id = p_partition
       AND NOT EXISTS (SELECT 1 FROM lethe.cursors c WHERE c.partition_id = p.id AND c.group_name = g.name)
       AND NOT EXISTS (SELECT 1 FROM lethe.subscriptions s WHERE s.queue_id = q.id AND s.group_name = g.name)
$$;

-- One tier change per queue (docs/ARCHITECTURE.md, "Tier changes"):
-- awaiting_confirm (a shortening: announced, not applied), running (the
-- queue has its new tier; its segments outside it are being settled) or
-- done. next_tier is a value set while it runs: it waits, and values in
-- between are skipped.
CREATE TABLE lethe.retention_changes (
    queue_id        bigint PRIMARY KEY REFERENCES lethe.queues(id) ON DELETE CASCADE,
    from_tier       text   NOT NULL,
    to_tier         text   NOT NULL,
    state           text   NOT NULL CHECK (state IN ('awaiting_confirm', 'running', 'done')),
    delete_messages bigint NOT NULL DEFAULT 0,
    delete_bytes    bigint NOT NULL DEFAULT 0,
    move_messages   bigint NOT NULL DEFAULT 0,
    move_bytes      bigint NOT NULL DEFAULT 0,
    hold_messages   bigint NOT NULL DEFAULT 0,
    hold_bytes      bigint NOT NULL DEFAULT 0,
    deleted_messages bigint NOT NULL DEFAULT 0,
    moved_messages  bigint NOT NULL DEFAULT 0,
    held_messages   bigint NOT NULL DEFAULT 0,
    next_tier       text,
    requested_at    timestamptz NOT NULL,
    confirmed_at    timestamptz,
    finished_at     timestamptz,
    updated_at      timestamptz NOT NULL
);

-- What settling a segment does, the one rule the tier check, tier changes
-- and their announcement share: 'move' into the queue's tier when that
-- tier keeps it and it is elsewhere; else 'hold' (to the held area) when
-- some group still wants a frame of it; else 'drop'. NULL: nothing to do
-- (it is in the queue's tier, which keeps it).
CREATE FUNCTION lethe.settle_action(p_queue_tier text, p_seg_tier text, p_at timestamptz,
                                    p_last_offset bigint, p_bound bigint, p_now timestamptz) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN lethe.tier_keeps(p_queue_tier, p_at, p_now) THEN
             CASE WHEN p_seg_tier <> p_queue_tier THEN 'move' END
        WHEN p_last_offset >= p_bound THEN 'hold'
        ELSE 'drop'
    END
$$;

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
CREATE FUNCTION lethe.settle_step(
    p_partition uuid,
    p_leaf      text,
    p_tiers     text[],
    p_from      bigint,
    p_batch     int,
    p_budget    bigint,
    p_now       timestamptz
) RETURNS TABLE (rule text, segments int, frames bigint, bytes bigint, next_from bigint, done bool)
LANGUAGE plpgsql AS $$
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
END $$;

-- Where the tier check's settling of one partition in leaf p_leaf may
-- start: nothing before the segment holding the partition's consumed bound
-- can be pending, so when the queue's tier is the leaf's own (the common
-- case: nothing moves to another tier) the walk starts there, or is not
-- needed at all (NULL) when no group wants anything.
CREATE FUNCTION lethe.settle_start(p_partition uuid, p_leaf text, p_leaf_tier text) RETURNS bigint
LANGUAGE plpgsql STABLE AS $$
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
END $$;

-- One bounded step of dropping a detached leaf, for one partition it held:
-- with quarantined: purge, up to p_batch dead letters of the messages the
-- leaf held (quarantine_purge; done is false while more are left); then
-- the audit row of what the drop removes (p_rule: tier_drop or held_drop),
-- the low watermark moved past it under the partition row lock, and the
-- progress recorded in lethe.leaves, in one transaction.
CREATE FUNCTION lethe.drop_partition_step(
    p_leaf      text,
    p_partition uuid,
    p_rule      text,
    p_batch     int,
    p_now       timestamptz
) RETURNS TABLE (segments int, frames bigint, bytes bigint, dead_letters int, done bool)
LANGUAGE plpgsql AS $$
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
END $$;

-- Whether a held leaf still holds a frame some group wants.
CREATE FUNCTION lethe.leaf_pending(p_leaf text) RETURNS bool
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v bool;
BEGIN
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM (SELECT s.partition_id, max(s.last_offset) AS m
                                                    FROM lethe.%I s GROUP BY s.partition_id) x
                                    WHERE x.m >= lethe.completed_bound(x.partition_id))', p_leaf) INTO v;
    RETURN v;
END $$;

-- What changing queue p_queue to tier p_to would do now, by action (move,
-- hold, drop): the announcement of a tier change, with the rule the change
-- runs (lethe.settle_action). Held segments stay where they are.
CREATE FUNCTION lethe.tier_change_preview(p_queue bigint, p_to text, p_now timestamptz)
RETURNS TABLE (action text, segments bigint, frames bigint, bytes bigint)
LANGUAGE sql STABLE AS $$
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

REVOKE ALL ON lethe.retention_changes FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.settle_action(text, text, timestamptz, bigint, bigint, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.settle_step(uuid, text, text[], bigint, int, bigint, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.settle_start(uuid, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.drop_partition_step(text, uuid, text, int, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.leaf_pending(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.tier_change_preview(bigint, text, timestamptz) FROM PUBLIC;
