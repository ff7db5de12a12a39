package retention

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// RetentionSeries is GET /api/v1/analytics/retention in Queen's shape:
// messages deleted per rule, bucketed over time.
type RetentionSeries struct {
	TimeRange     TimeRange      `json:"timeRange"`
	BucketMinutes int            `json:"bucketMinutes"`
	Series        []SeriesBucket `json:"series"`
	Totals        SeriesTotals   `json:"totals"`
}

// TimeRange is the window the series covers.
type TimeRange struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// SeriesTotals are message (frame) counts, not segment rows. EventCount is
// how many deleting steps wrote a history row.
type SeriesTotals struct {
	RetentionMsgs          int64 `json:"retentionMsgs"`
	CompletedRetentionMsgs int64 `json:"completedRetentionMsgs"`
	EvictionMsgs           int64 `json:"evictionMsgs"`
	TotalMsgs              int64 `json:"totalMsgs"`
	EventCount             int64 `json:"eventCount"`
}

// SeriesBucket is one bucket of the series.
type SeriesBucket struct {
	Bucket time.Time `json:"bucket"`
	SeriesTotals
}

// bucketMinutes picks a bucket width that keeps a series a few hundred
// points long at most.
func bucketMinutes(span time.Duration) int {
	switch {
	case span <= 2*time.Hour:
		return 1
	case span <= 12*time.Hour:
		return 5
	case span <= 48*time.Hour:
		return 15
	case span <= 14*24*time.Hour:
		return 60
	default:
		return 24 * 60
	}
}

// RetentionAnalytics aggregates lethe.retention_history from from to to
// (both included), of one queue or of all when queue is empty. Buckets
// without deletions are left out.
func (s *Service) RetentionAnalytics(ctx context.Context, from, to time.Time, queue string) (*RetentionSeries, error) {
	out := &RetentionSeries{TimeRange: TimeRange{From: from, To: to}, BucketMinutes: bucketMinutes(to.Sub(from)),
		Series: []SeriesBucket{}}
	rows, err := s.pool.Query(ctx, `
		SELECT to_timestamp(floor(extract(epoch FROM h.executed_at) / $4) * $4) AS bucket,
		       coalesce(sum(h.frames) FILTER (WHERE h.rule = 'retention'), 0)::bigint,
		       coalesce(sum(h.frames) FILTER (WHERE h.rule = 'completed_retention'), 0)::bigint,
		       coalesce(sum(h.frames) FILTER (WHERE h.rule = 'max_wait'), 0)::bigint,
		       count(*)
		  FROM lethe.retention_history h
		 WHERE h.executed_at >= $1 AND h.executed_at <= $2 AND ($3 = '' OR h.queue_name = $3)
		   AND h.rule IN ('retention', 'completed_retention', 'max_wait')
		 GROUP BY 1 ORDER BY 1`, from, to, queue, out.BucketMinutes*60)
	if err != nil {
		return nil, fmt.Errorf("retention analytics: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var b SeriesBucket
		if err := rows.Scan(&b.Bucket, &b.RetentionMsgs, &b.CompletedRetentionMsgs, &b.EvictionMsgs, &b.EventCount); err != nil {
			return nil, fmt.Errorf("retention analytics: %w", err)
		}
		b.Bucket = b.Bucket.UTC()
		b.TotalMsgs = b.RetentionMsgs + b.CompletedRetentionMsgs + b.EvictionMsgs
		out.Series = append(out.Series, b)
		t := &out.Totals
		t.RetentionMsgs += b.RetentionMsgs
		t.CompletedRetentionMsgs += b.CompletedRetentionMsgs
		t.EvictionMsgs += b.EvictionMsgs
		t.TotalMsgs += b.TotalMsgs
		t.EventCount += b.EventCount
	}
	return out, rows.Err()
}

// HistoryEntry is one audit row: what one step deleted by one rule.
type HistoryEntry struct {
	ID          int64       `json:"id"`
	ExecutedAt  time.Time   `json:"executedAt"`
	Queue       string      `json:"queue"`
	Partition   string      `json:"partition"`
	PartitionID string      `json:"partitionId"`
	Rule        string      `json:"rule"`
	Segments    int         `json:"segments"`
	Messages    int64       `json:"messages"`
	Bytes       int64       `json:"bytes"`
	FromOffset  *int64      `json:"fromOffset"`
	ToOffset    *int64      `json:"toOffset"`
	Lost        []GroupLoss `json:"lost"`
}

// GroupLoss is what one consumer group had not consumed of the deleted
// offsets: Messages between FromOffset and ToOffset, Leased of which it
// held under a live lease. Queue mode is the group "__QUEUE_MODE__".
type GroupLoss struct {
	Group      string `json:"group"`
	Messages   int64  `json:"messages"`
	FromOffset int64  `json:"fromOffset"`
	ToOffset   int64  `json:"toOffset"`
	Leased     int64  `json:"leased"`
}

// HistoryQuery filters the audit rows; zero values match everything.
type HistoryQuery struct {
	Queue string
	Rule  string
	From  time.Time
	To    time.Time
	// LostOnly keeps rows where some group lost unread messages.
	LostOnly bool
	Limit    int
}

// History returns audit rows, newest first.
func (s *Service) History(ctx context.Context, q HistoryQuery) ([]HistoryEntry, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT h.id, h.executed_at, h.queue_name, h.partition_name, h.partition_id::text, h.rule,
		       h.segments, h.frames, h.bytes, h.from_offset, h.to_offset, h.lost
		  FROM lethe.retention_history h
		 WHERE ($1 = '' OR h.queue_name = $1) AND ($2 = '' OR h.rule = $2)
		   AND h.executed_at >= $3 AND h.executed_at <= $4
		   AND (NOT $5 OR h.lost IS NOT NULL)
		 ORDER BY h.executed_at DESC, h.id DESC
		 LIMIT $6`, q.Queue, q.Rule, q.From, q.To, q.LostOnly, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("retention history: %w", err)
	}
	defer rows.Close()
	out := []HistoryEntry{}
	for rows.Next() {
		var e HistoryEntry
		var lost []byte
		if err := rows.Scan(&e.ID, &e.ExecutedAt, &e.Queue, &e.Partition, &e.PartitionID, &e.Rule,
			&e.Segments, &e.Messages, &e.Bytes, &e.FromOffset, &e.ToOffset, &lost); err != nil {
			return nil, fmt.Errorf("retention history: %w", err)
		}
		e.ExecutedAt = e.ExecutedAt.UTC()
		e.Lost = []GroupLoss{}
		if len(lost) > 0 {
			if err := json.Unmarshal(lost, &e.Lost); err != nil {
				return nil, fmt.Errorf("retention history: row %d: %w", e.ID, err)
			}
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
