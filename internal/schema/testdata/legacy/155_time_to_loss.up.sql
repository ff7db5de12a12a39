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

-- lethe.group_lag (migration 100) with, where a group has unread messages
-- on a partition and its queue a rule that deletes them, when the first of
-- them is lost (loss_at), and that rule (loss_rule, also where nothing is
-- unread). The window is the shorter of the queue's retention and eviction
-- windows (lethe.queue_windows, migration 154: none while it is held);
-- eviction wins a tie, as in lethe.retention_rule. Joined once per queue.
CREATE VIEW lethe.group_loss AS
SELECT gl.*, w.rule AS loss_rule,
       CASE WHEN gl.offset_lag > 0 AND w.secs IS NOT NULL
            THEN lethe.store_judged_at(gl.partition_id, gl.first_unconsumed) + make_interval(secs => w.secs)
       END AS loss_at
  FROM lethe.group_lag gl
  LEFT JOIN (SELECT qw.queue_id, least(qw.retention_seconds, qw.evict_seconds) AS secs,
                    CASE WHEN qw.evict_seconds <= coalesce(qw.retention_seconds, qw.evict_seconds)
                         THEN 'maxWaitTimeSeconds' ELSE 'retentionSeconds' END AS rule
               FROM lethe.queue_windows qw
              WHERE qw.retention_seconds IS NOT NULL OR qw.evict_seconds IS NOT NULL) w
         ON w.queue_id = gl.queue_id;

REVOKE ALL ON lethe.group_loss FROM PUBLIC;
REVOKE ALL ON FUNCTION lethe.store_judged_at(uuid, bigint) FROM PUBLIC;
