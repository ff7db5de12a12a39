package retention

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/tier"
)

// Explain states, for one queue as configured, every rule that deletes
// its messages and the bounds of a message's life under it (GET
// /api/v1/retention/explain/{queue}, lethe retention explain). The rules
// all apply; whichever deletes a message first wins.
func (s *Service) Explain(ctx context.Context, queue string) (*api.RetentionExplain, error) {
	var q explainQueue
	x := &api.RetentionExplain{Queue: queue, Bounds: []api.RetentionBound{}}
	err := s.pool.QueryRow(ctx, `
		SELECT retention_tier, quarantined, required_groups, retention_enabled, retention_seconds,
		       completed_retention_seconds, max_wait_time_seconds
		  FROM lethe.queues WHERE name = $1`, queue).
		Scan(&x.Tier, &x.Quarantined, &x.Required, &q.Enabled, &q.Retention, &q.Completed, &q.MaxWait)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: %q", ErrUnknownQueue, queue)
	}
	if err != nil {
		return nil, fmt.Errorf("explain retention of %s: %w", queue, err)
	}
	q.Tier, q.Quarantined = x.Tier, x.Quarantined
	holds, err := s.holdBounds(ctx, queue)
	if err != nil {
		return nil, err
	}
	x.Bounds = append(x.Bounds, holds...)
	x.Bounds = append(x.Bounds, explainBounds(q, s.cfg)...)
	changes, err := s.reads.TierChanges(ctx, queue)
	if err != nil {
		return nil, err
	}
	if len(changes) > 0 {
		x.Change = &changes[0]
	}
	return x, nil
}

// explainBounds are the bounds of the registry's rules that state one per
// queue: the tier's first (it is the queue's base: whole partitions), then
// the others in registry order.
func explainBounds(q explainQueue, cfg Config) []api.RetentionBound {
	var out []api.RetentionBound
	if b, ok := tierDropRule.explain(q, cfg); ok {
		out = append(out, b)
	}
	for _, r := range registry {
		e, ok := r.(explainer)
		if _, tier := r.(ruleTierDrop); !ok || tier {
			continue
		}
		if b, ok := e.explain(q, cfg); ok {
			out = append(out, b)
		}
	}
	return out
}

// tierBound states the tier's rule: whole partitions dropped once wholly
// older than the window, checked every check.
func tierBound(t tier.Tier, quarantined string, check time.Duration) api.RetentionBound {
	b := t.LifeBounds(check)
	if b.Forever {
		return api.RetentionBound{Rule: "retentionTier", Deletes: "nothing",
			Text: "tier forever: month partitions no tier drops; only the seconds rules below (if any) delete"}
	}
	w, _ := t.Window()
	dl := "dead letters are kept until replayed or deleted (quarantined: keep)"
	if quarantined == string(tier.Purge) {
		dl = "dead letters go with the partition of their message (quarantined: purge)"
	}
	return api.RetentionBound{Rule: "retentionTier", Deletes: "finished messages, by whole partitions",
		MinSeconds: int64(b.Min.Seconds()), MaxSeconds: int64(b.Max.Seconds()),
		Text: fmt.Sprintf("tier %s: partitions of %s, dropped once wholly %s old, checked every %s: a message lives %s to %s; "+
			"messages some group has not consumed move to the held area instead and stay until consumed; %s",
			t, days(t.Span()), days(w), check, days(b.Min), days(b.Max), dl)}
}

// secondsBound states a seconds rule: a segment goes at the first cycle
// after its newest message is older than the window.
func secondsBound(rule, deletes string, secs int64, cycle time.Duration) api.RetentionBound {
	w := time.Duration(secs) * time.Second
	return api.RetentionBound{Rule: rule, Deletes: deletes, MinSeconds: secs, MaxSeconds: int64((w + cycle).Seconds()),
		Text: fmt.Sprintf("%s %d: %s, by whole segments once the newest message of the segment is older than %s, "+
			"at the next cycle (every %s): at least %s, at most %s plus the segment's own span", rule, secs, deletes, w, cycle, w, w+cycle)}
}

// days writes a duration in days and hours.
func days(d time.Duration) string {
	dd, h := int(d/tier.Day), int((d%tier.Day)/time.Hour)
	switch {
	case h == 0:
		return fmt.Sprintf("%dd", dd)
	case dd == 0:
		return d.String()
	}
	return fmt.Sprintf("%dd%dh", dd, h)
}

// holdBounds states the queue's active retention holds first: while one
// stands, no rule after it deletes anything.
func (s *Service) holdBounds(ctx context.Context, queue string) ([]api.RetentionBound, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, reason, placed_at, placed_by FROM lethe.retention_holds
		 WHERE queue_name = $1 AND released_at IS NULL ORDER BY id`, queue)
	if err != nil {
		return nil, fmt.Errorf("explain retention of %s: read its holds: %w", queue, err)
	}
	defer rows.Close()
	var out []api.RetentionBound
	for rows.Next() {
		var id int64
		var reason, by string
		var at time.Time
		if err := rows.Scan(&id, &reason, &at, &by); err != nil {
			return nil, fmt.Errorf("explain retention of %s: read its holds: %w", queue, err)
		}
		out = append(out, api.RetentionBound{Rule: "retentionHold", Deletes: "nothing",
			Text: fmt.Sprintf("hold %d, placed %s by %s (%s): nothing of the queue is deleted, by any rule below, until it is released",
				id, at.UTC().Format(time.RFC3339), by, reason)})
	}
	return out, rows.Err()
}
