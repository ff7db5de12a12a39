-- The read models defined in SQL: lag, the queues' rule windows, and the
-- time to loss over them. In dependency order (a view must follow those it
-- reads), after every function file (views.sql sorts last).

-- Lag, defined once: where every consumer group stands on every partition
-- of the queues it reads, and how many messages it has left there. The
-- API's consumer-group and status read models (internal/inspect) and the
-- Prometheus gauge lethe_queue_lag_messages (internal/metrics) both read
-- this view, so they cannot disagree.
--
-- A group belongs to a queue when it has a subscription to it or a cursor on
-- one of its partitions. Its first unconsumed offset on a partition is the
-- one lethe.group_positions says it wants next, the
-- definition completed retention uses: committed + 1 with a cursor; without
-- one, from its subscription start (offset 0 in mode all, else the first
-- segment whose newest frame is at or after its start time, else the next
-- offset). (The shortcut through last_push_at gives the same answer: no
-- segment of a partition is newer than its last push.) Nothing below the
-- low watermark is stored, so lag counts from there at the earliest.
CREATE OR REPLACE VIEW lethe.group_lag AS
 WITH members AS (
         SELECT s.queue_id,
            s.group_name
           FROM lethe.subscriptions s
        UNION
         SELECT p.queue_id,
            c.group_name
           FROM (lethe.cursors c
             JOIN lethe.partitions p ON ((p.id = c.partition_id)))
        ), placed AS (
         SELECT m.group_name,
            q.id AS queue_id,
            q.name AS queue_name,
            p.id AS partition_id,
            p.name AS partition_name,
            p.next_offset,
            p.low_watermark,
            c.committed,
            c.lease_id,
            c.lease_until,
            c.last_pop_at,
            sub.mode,
            sub.from_at,
            sub.created_at AS subscribed_at,
            GREATEST(p.low_watermark,
                CASE
                    WHEN (c.partition_id IS NOT NULL) THEN (c.committed + 1)
                    WHEN (sub.from_at IS NULL) THEN (0)::bigint
                    WHEN ((p.last_push_at IS NULL) OR (p.last_push_at < sub.from_at)) THEN p.next_offset
                    ELSE COALESCE(lethe.store_offset_since(p.id, sub.from_at), p.next_offset)
                END) AS first_unconsumed
           FROM ((((members m
             JOIN lethe.queues q ON ((q.id = m.queue_id)))
             LEFT JOIN lethe.partitions p ON ((p.queue_id = q.id)))
             LEFT JOIN lethe.cursors c ON (((c.partition_id = p.id) AND (c.group_name = m.group_name))))
             LEFT JOIN lethe.subscriptions sub ON (((sub.queue_id = q.id) AND (sub.group_name = m.group_name))))
        )
 SELECT pl.group_name,
    pl.queue_id,
    pl.queue_name,
    pl.partition_id,
    pl.partition_name,
    pl.next_offset,
    pl.low_watermark,
    pl.committed,
    pl.lease_id,
    pl.lease_until,
    pl.last_pop_at,
    pl.mode,
    pl.from_at,
    pl.subscribed_at,
    pl.first_unconsumed,
    GREATEST((pl.next_offset - pl.first_unconsumed), (0)::bigint) AS offset_lag
   FROM placed pl;

-- Each queue's rule windows in seconds, defined once: NULL is a rule that
-- is off, and every rule is off while the queue is held.
-- lethe.retention_cutoffs (the sweep, its dry run and the status) and the
-- time to loss (lethe.group_loss) read it.
CREATE OR REPLACE VIEW lethe.queue_windows AS
 SELECT q.id AS queue_id,
    q.name AS queue_name,
        CASE
            WHEN (q.retention_enabled AND (q.retention_seconds > 0) AND (NOT h.held)) THEN (q.retention_seconds)::bigint
            ELSE NULL::bigint
        END AS retention_seconds,
        CASE
            WHEN (q.retention_enabled AND (q.completed_retention_seconds > 0) AND (NOT h.held)) THEN (q.completed_retention_seconds)::bigint
            ELSE NULL::bigint
        END AS completed_seconds,
        CASE
            WHEN ((q.max_wait_time_seconds > 0) AND (NOT h.held)) THEN (q.max_wait_time_seconds)::bigint
            ELSE NULL::bigint
        END AS evict_seconds,
    (GREATEST(q.dedup_window_seconds, q.completed_retention_seconds, 900))::bigint AS txn_seconds
   FROM (lethe.queues q
     CROSS JOIN LATERAL ( SELECT lethe.queue_held(q.id) AS held) h);

-- lethe.group_lag with, where a group has unread messages
-- on a partition and its queue a rule that deletes them, when the first of
-- them is lost (loss_at), and that rule (loss_rule, also where nothing is
-- unread). The window is the shorter of the queue's retention and eviction
-- windows (lethe.queue_windows: none while it is held);
-- eviction wins a tie, as in lethe.retention_rule. Joined once per queue.
CREATE OR REPLACE VIEW lethe.group_loss AS
 SELECT gl.group_name,
    gl.queue_id,
    gl.queue_name,
    gl.partition_id,
    gl.partition_name,
    gl.next_offset,
    gl.low_watermark,
    gl.committed,
    gl.lease_id,
    gl.lease_until,
    gl.last_pop_at,
    gl.mode,
    gl.from_at,
    gl.subscribed_at,
    gl.first_unconsumed,
    gl.offset_lag,
    w.rule AS loss_rule,
        CASE
            WHEN ((gl.offset_lag > 0) AND (w.secs IS NOT NULL)) THEN (lethe.store_judged_at(gl.partition_id, gl.first_unconsumed) + make_interval(secs => (w.secs)::double precision))
            ELSE NULL::timestamp with time zone
        END AS loss_at
   FROM (lethe.group_lag gl
     LEFT JOIN ( SELECT qw.queue_id,
            LEAST(qw.retention_seconds, qw.evict_seconds) AS secs,
                CASE
                    WHEN (qw.evict_seconds <= COALESCE(qw.retention_seconds, qw.evict_seconds)) THEN 'maxWaitTimeSeconds'::text
                    ELSE 'retentionSeconds'::text
                END AS rule
           FROM lethe.queue_windows qw
          WHERE ((qw.retention_seconds IS NOT NULL) OR (qw.evict_seconds IS NOT NULL))) w ON ((w.queue_id = gl.queue_id)));
