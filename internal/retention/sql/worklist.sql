-- The cycle's work list at $1, of every queue (or of queue $2): one row
-- per queue that has partitions, with its rules' cutoffs (computed once by
-- lethe.retention_cutoffs; NULL is a rule that is off), its footprint for
-- the gauges and the status, and only the partitions with something to do,
-- as parallel arrays. A partition's head segment, its oldest sidecar row
-- and its consumed bound (lethe.completed_bound, asked only where the
-- completed rule could apply to the head) decide which phases it needs.
--
-- A queue with no deleting rule (every cutoff NULL) has nothing due: its
-- heads serve only the footprint (oldest_at, empty_partitions). Reading
-- one descends the primary key of every leaf of lethe.segments, so the
-- loop passes back the heads it read before ($3, $4, $5: partition, the
-- low watermark then, the head's first frame time) and a head is read
-- again only where the low watermark moved. Segments are written past
-- next_offset (a tier move puts one back unchanged) and deleted from the
-- head, and every deleting step moves the watermark in its transaction; a
-- leaf drop takes its rows out (DETACH) before its steps move the
-- watermarks, so while any segment leaf is not attached nothing
-- remembered is used. A partition whose next_offset is its watermark
-- holds nothing and is not read. The queue's heads come back
-- (head_partitions, head_watermarks, head_first_ats) for the next cycle
-- (unordered arrays of one aggregation: rows reach all three in the same
-- order); heads_read counts the partitions whose head was read.
WITH known AS (
    SELECT k.partition_id, k.low_watermark, k.first_at
      FROM unnest($3::uuid[], $4::bigint[], $5::timestamptz[]) AS k(partition_id, low_watermark, first_at)
     WHERE NOT EXISTS (SELECT 1 FROM lethe.leaves l WHERE l.state <> 'attached' AND l.tier <> 'txns')
), listed AS (
    SELECT c.queue_id, c.queue_name, c.retention_cutoff, c.completed_cutoff, c.evict_cutoff, c.txn_cutoff,
           r.ruled, p.id AS partition_id, p.name AS partition_name, p.low_watermark,
           k.first_at AS known_first_at,
           r.ruled OR (k.partition_id IS NULL AND p.next_offset > p.low_watermark) AS read_head
      FROM lethe.retention_cutoffs($1::timestamptz) c
     CROSS JOIN LATERAL (
           SELECT c.retention_cutoff IS NOT NULL OR c.completed_cutoff IS NOT NULL
                  OR c.evict_cutoff IS NOT NULL AS ruled) r
      JOIN lethe.partitions p ON p.queue_id = c.queue_id
      LEFT JOIN known k ON NOT r.ruled AND k.partition_id = p.id AND k.low_watermark = p.low_watermark
     WHERE $2::text = '' OR c.queue_name = $2
), part AS (
    SELECT w.*,
           h.base_offset AS head_base, h.last_offset AS head_last,
           coalesce(h.first_at, w.known_first_at) AS head_first_at, h.last_at AS head_last_at,
           -- The sidecar is dropped by day leaves in the tier check
           -- (migration 050), not purged by partition.
           NULL::timestamptz AS txn_head_at
      FROM listed w
      LEFT JOIN LATERAL (
            SELECT s.base_offset, s.last_offset, s.first_at, s.last_at
              FROM lethe.segments s
             WHERE w.read_head AND s.partition_id = w.partition_id
             ORDER BY s.base_offset
             LIMIT 1) h ON true
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
       (count(*) FILTER (WHERE d.head_first_at IS NULL))::int AS empty_partitions,
       min(d.head_first_at) AS oldest_at,
       coalesce(extract(epoch FROM greatest(max(d.lag), interval '0')), 0)::float8 AS window_lag_seconds,
       array_agg(d.partition_id ORDER BY d.partition_name) FILTER (WHERE d.retention_due OR d.evict_due OR d.txns_due),
       array_agg(d.partition_name ORDER BY d.partition_name) FILTER (WHERE d.retention_due OR d.evict_due OR d.txns_due),
       array_agg(d.retention_due ORDER BY d.partition_name) FILTER (WHERE d.retention_due OR d.evict_due OR d.txns_due),
       array_agg(d.evict_due ORDER BY d.partition_name) FILTER (WHERE d.retention_due OR d.evict_due OR d.txns_due),
       array_agg(d.txns_due ORDER BY d.partition_name) FILTER (WHERE d.retention_due OR d.evict_due OR d.txns_due),
       (count(*) FILTER (WHERE d.read_head))::int AS heads_read,
       array_agg(d.partition_id) FILTER (WHERE NOT d.ruled AND d.head_first_at IS NOT NULL) AS head_partitions,
       array_agg(d.low_watermark) FILTER (WHERE NOT d.ruled AND d.head_first_at IS NOT NULL) AS head_watermarks,
       array_agg(d.head_first_at) FILTER (WHERE NOT d.ruled AND d.head_first_at IS NOT NULL) AS head_first_ats
  FROM due d
 GROUP BY d.queue_id, d.queue_name, d.retention_cutoff, d.completed_cutoff, d.evict_cutoff, d.txn_cutoff
 ORDER BY d.queue_name
