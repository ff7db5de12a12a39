-- The cycle's work list at $1, of every queue (or of queue $2): one row
-- per queue that has partitions, with its rules' cutoffs (computed once by
-- lethe.retention_cutoffs; NULL is a rule that is off), its footprint for
-- the gauges and the status, and only the partitions with something to do,
-- as parallel arrays. A partition's head segment, its oldest sidecar row
-- and its consumed bound (lethe.completed_bound, asked only where the
-- completed rule could apply to the head) decide which phases it needs.
WITH part AS (
    SELECT c.queue_id, c.queue_name, c.retention_cutoff, c.completed_cutoff, c.evict_cutoff, c.txn_cutoff,
           p.id AS partition_id, p.name AS partition_name,
           h.base_offset AS head_base, h.last_offset AS head_last,
           h.first_at AS head_first_at, h.last_at AS head_last_at,
           -- The sidecar is dropped by day leaves in the tier check
           -- (migration 050), not purged by partition.
           NULL::timestamptz AS txn_head_at
      FROM lethe.retention_cutoffs($1::timestamptz) c
      JOIN lethe.partitions p ON p.queue_id = c.queue_id
      LEFT JOIN LATERAL (
            SELECT s.base_offset, s.last_offset, s.first_at, s.last_at
              FROM lethe.segments s
             WHERE s.partition_id = p.id
             ORDER BY s.base_offset
             LIMIT 1) h ON true
     WHERE $2::text = '' OR c.queue_name = $2
), bounded AS (
    -- A CASE, not a filtered lateral: the planner turns that one's WHERE
    -- into a join filter and asks every partition's bound first.
    SELECT w.*,
           CASE WHEN w.completed_cutoff IS NOT NULL AND w.head_first_at < w.completed_cutoff
                THEN lethe.completed_bound(w.partition_id) END AS bound
      FROM part w
), flagged AS (
    SELECT w.*,
           w.head_base IS NOT NULL
               AND lethe.retention_rule(w.head_last_at, w.head_last, w.bound,
                                        w.retention_cutoff, w.completed_cutoff, NULL) IS NOT NULL AS retention_due,
           coalesce(w.txn_head_at < w.txn_cutoff, false) AS txns_due,
           -- How much older than its window the oldest message is: the time
           -- windows bound every message, completedRetentionSeconds only a
           -- head that holds consumed messages.
           greatest(w.retention_cutoff - w.head_first_at, w.evict_cutoff - w.head_first_at,
                    CASE WHEN w.head_base < w.bound THEN w.completed_cutoff - w.head_first_at END) AS lag
      FROM bounded w
), due AS (
    SELECT f.*,
           -- Eviction also runs where retention will delete the head: the
           -- next head may be old enough.
           f.evict_cutoff IS NOT NULL AND f.head_base IS NOT NULL
               AND (f.head_last_at < f.evict_cutoff OR f.retention_due) AS evict_due
      FROM flagged f
)
SELECT d.queue_name, d.retention_cutoff, d.completed_cutoff, d.evict_cutoff, d.txn_cutoff,
       count(*)::int AS partitions,
       (count(*) FILTER (WHERE d.head_base IS NULL))::int AS empty_partitions,
       min(d.head_first_at) AS oldest_at,
       coalesce(extract(epoch FROM greatest(max(d.lag), interval '0')), 0)::float8 AS window_lag_seconds,
       array_agg(d.partition_id ORDER BY d.partition_name) FILTER (WHERE d.retention_due OR d.evict_due OR d.txns_due),
       array_agg(d.partition_name ORDER BY d.partition_name) FILTER (WHERE d.retention_due OR d.evict_due OR d.txns_due),
       array_agg(d.retention_due ORDER BY d.partition_name) FILTER (WHERE d.retention_due OR d.evict_due OR d.txns_due),
       array_agg(d.evict_due ORDER BY d.partition_name) FILTER (WHERE d.retention_due OR d.evict_due OR d.txns_due),
       array_agg(d.txns_due ORDER BY d.partition_name) FILTER (WHERE d.retention_due OR d.evict_due OR d.txns_due)
  FROM due d
 GROUP BY d.queue_id, d.queue_name, d.retention_cutoff, d.completed_cutoff, d.evict_cutoff, d.txn_cutoff
 ORDER BY d.queue_name
