-- The cycle's work list: every partition of every queue (or of queue $2)
-- with its rules' cutoffs at $1, computed once by lethe.retention_cutoffs;
-- NULL is a rule that is off. The head segment and the completed bound
-- (MIN(committed)+1 over the partition's cursors) tell which partitions
-- have work, so an idle partition costs no step call.
SELECT w.queue_name, w.partition_id, w.partition_name,
       w.retention_cutoff, w.completed_cutoff, w.evict_cutoff, w.txn_cutoff,
       w.head_base, w.head_first_at, w.bound,
       w.retention_due,
       w.evict_cutoff IS NOT NULL AND w.head_base IS NOT NULL
           AND (w.head_last_at < w.evict_cutoff OR w.retention_due) AS evict_due,
       coalesce((SELECT t.created_at FROM lethe.txns t
                  WHERE t.partition_id = w.partition_id
                  ORDER BY t.base_offset LIMIT 1) < w.txn_cutoff, false) AS txns_due
  FROM (
    SELECT c.queue_name, p.id AS partition_id, p.name AS partition_name,
           c.retention_cutoff, c.completed_cutoff, c.evict_cutoff, c.txn_cutoff,
           h.base_offset AS head_base, h.first_at AS head_first_at, h.last_at AS head_last_at, b.bound,
           h.base_offset IS NOT NULL
               AND lethe.retention_rule(h.last_at, h.last_offset, b.bound,
                                        c.retention_cutoff, c.completed_cutoff, NULL) IS NOT NULL AS retention_due
      FROM lethe.retention_cutoffs($1::timestamptz) c
      JOIN lethe.partitions p ON p.queue_id = c.queue_id
      LEFT JOIN LATERAL (
            SELECT s.base_offset, s.last_offset, s.first_at, s.last_at
              FROM lethe.segments s
             WHERE s.partition_id = p.id
             ORDER BY s.base_offset
             LIMIT 1) h ON true
      LEFT JOIN LATERAL (
            SELECT min(cu.committed) + 1 AS bound
              FROM lethe.cursors cu
             WHERE cu.partition_id = p.id) b ON true
     WHERE $2::text = '' OR c.queue_name = $2
  ) w
 ORDER BY w.queue_name, w.partition_name
