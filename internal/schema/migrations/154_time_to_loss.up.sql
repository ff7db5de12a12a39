-- When a consumer group starts losing data it has not read: the two rules
-- that delete unread messages (retentionSeconds with retentionEnabled, and
-- maxWaitTimeSeconds) judge a segment by its newest frame (last_at,
-- lethe.retention_rule), so a group's first unconsumed offset on a
-- partition is lost at the first cycle after that segment's last_at plus
-- the shorter of the two windows. Defined once, by the view lethe.group_loss,
-- which the API's consumer-group and status answers and the gauge
-- lethe_queue_group_loss_timestamp_seconds read.

-- The newest frame time of the segment holding p_offset, or of the first
-- segment after it when p_offset is not stored (below the head, or in a
-- gap), or NULL when nothing at or after p_offset is stored.
CREATE FUNCTION lethe.store_judged_at(p_partition uuid, p_offset bigint) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        (SELECT CASE WHEN h.last_offset >= p_offset THEN h.last_at END
           FROM (SELECT s.last_offset, s.last_at FROM lethe.segments s
                  WHERE s.partition_id = p_partition AND s.base_offset <= p_offset
                  ORDER BY s.base_offset DESC LIMIT 1) h),
        (SELECT s.last_at FROM lethe.segments s
          WHERE s.partition_id = p_partition AND s.base_offset > p_offset
          ORDER BY s.base_offset LIMIT 1))
$$;

-- The window after which each queue's rules delete unread data, and which
-- rule it is; a queue whose rules delete no unread data has no row. The
-- shorter wins; maxWaitTimeSeconds applies whether retention is enabled or
-- not (lethe.retention_cutoffs). A view, not a function called per row:
-- the planner joins it once per queue.
CREATE VIEW lethe.loss_windows AS
SELECT q.id AS queue_id, w.secs AS window_seconds,
       CASE WHEN w.secs = r.evict THEN 'maxWaitTimeSeconds' ELSE 'retentionSeconds' END AS rule
  FROM lethe.queues q
 CROSS JOIN LATERAL (SELECT CASE WHEN q.retention_enabled AND q.retention_seconds > 0
                                 THEN q.retention_seconds::bigint END AS keep,
                            CASE WHEN q.max_wait_time_seconds > 0 THEN q.max_wait_time_seconds::bigint END AS evict) r
 CROSS JOIN LATERAL (SELECT least(r.keep, r.evict) AS secs) w
 WHERE w.secs IS NOT NULL;

-- lethe.group_lag (migration 100) with, where a group has unread messages
-- on a partition and its queue a rule that deletes them, when the first of
-- them is lost (loss_at), and that rule (loss_rule, also where nothing is
-- unread).
CREATE VIEW lethe.group_loss AS
SELECT gl.*, lw.rule AS loss_rule,
       CASE WHEN gl.offset_lag > 0 AND lw.window_seconds IS NOT NULL
            THEN lethe.store_judged_at(gl.partition_id, gl.first_unconsumed) + make_interval(secs => lw.window_seconds)
       END AS loss_at
  FROM lethe.group_lag gl
  LEFT JOIN lethe.loss_windows lw ON lw.queue_id = gl.queue_id;

REVOKE ALL ON lethe.group_loss FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.store_judged_at(uuid, bigint) FROM PUBLIC;
REVOKE ALL ON lethe.loss_windows FROM PUBLIC;
