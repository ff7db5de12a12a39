package inspect

import (
	"context"
	"fmt"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// RetentionSeries is GET /api/v1/analytics/retention in Queen's shape:
// messages deleted per rule, bucketed over time.
type RetentionSeries struct {
	TimeRange     TimeRange      `json:"timeRange"`
	BucketMinutes int            `json:"bucketMinutes"`
	Series        []SeriesBucket `json:"series"`
	Totals        SeriesTotals   `json:"totals"`
}

// TimeRange is the window the series (and a history answer) covers.
type TimeRange struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// SeriesTotals are message (frame) counts, not segment rows. EventCount is
// how many history rows (decisions: a queue, a rule, a cycle; one per step
// on rows written before migration 110) the bucket holds.
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
// (both included), of one queue or of all when queue is empty: what the
// seconds rules deleted (api's names of the retention loop's rules).
// Buckets without deletions are left out.
func (r *Reader) RetentionAnalytics(ctx context.Context, from, to time.Time, queue string) (*RetentionSeries, error) {
	out := &RetentionSeries{TimeRange: TimeRange{From: from, To: to}, BucketMinutes: bucketMinutes(to.Sub(from)),
		Series: []SeriesBucket{}}
	rows, err := r.pool.Query(ctx, `
		SELECT to_timestamp(floor(extract(epoch FROM h.executed_at) / $4) * $4) AS bucket,
		       coalesce(sum(h.frames) FILTER (WHERE h.rule = $5), 0)::bigint,
		       coalesce(sum(h.frames) FILTER (WHERE h.rule = $6), 0)::bigint,
		       coalesce(sum(h.frames) FILTER (WHERE h.rule = $7), 0)::bigint,
		       count(*)
		  FROM lethe.retention_history h
		 WHERE h.executed_at >= $1 AND h.executed_at <= $2 AND ($3 = '' OR h.queue_name = $3)
		   AND h.rule IN ($5, $6, $7)
		 GROUP BY 1 ORDER BY 1`, from, to, queue, out.BucketMinutes*60,
		api.RuleRetention, api.RuleCompletedRetention, api.RuleMaxWait)
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
