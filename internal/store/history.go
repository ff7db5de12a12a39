package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// DeletedBy lists the rules of the retention history's decisions that
// deleted offsets from..to of partition pid (named partition) of queue
// at or after since, each with when it last did (rule, time), oldest
// first. A decision lists the ranges of its first partitions only (at most
// 16): one that stopped listing before this partition may have deleted it
// and is counted. Moves delete nothing. Served by
// retention_history_queue_time_idx. The caller closes the rows.
func DeletedBy(ctx context.Context, q Querier, queue string, pid uuid.UUID, partition string, from, to int64, since time.Time) (pgx.Rows, error) {
	return q.Query(ctx, `
	SELECT h.rule, max(h.executed_at) AS at
	  FROM lethe.retention_history h
	 WHERE h.queue_name = $1 AND h.executed_at >= $6
	   AND h.rule NOT IN ('held_move', 'tier_move')
	   AND CASE WHEN h.ranges IS NULL
	            THEN h.partition_id = $2 AND h.from_offset <= $5 AND h.to_offset >= $4
	            WHEN h.ranges ? $3
	            THEN (h.ranges -> $3 ->> 0)::bigint <= $5 AND (h.ranges -> $3 ->> 1)::bigint >= $4
	            ELSE h.partitions > (SELECT count(*) FROM jsonb_object_keys(h.ranges))
	       END
	 GROUP BY h.rule
	 ORDER BY at`, queue, pid, partition, from, to, since)
}
