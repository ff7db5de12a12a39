package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/store"
)

// skipGap moves the locked cursor past what retention deleted under it and
// answers that run as the gap its pop reports, with the rules that deleted
// it; nil when nothing the group had not consumed was deleted. Every claim
// checks before anything else, so a step that made the gap ran after the
// group's last claim on the partition (ps.lastPop), which bounds the
// history it reads; a decision is dated by its cycle's start, so the bound
// is moved back by gapHistoryMargin, longer than any cycle runs.
func skipGap(ctx context.Context, tx pgx.Tx, q *Queue, cand candidate, row *cursorRow, ps partState) (*api.Gap, error) {
	from, to, unread, ok := row.Cursor.SkipDeleted(ps.low)
	if !ok {
		return nil, nil
	}
	g := &api.Gap{Queue: q.Name, Partition: cand.name, PartitionID: cand.pid.String(),
		FromOffset: from, ToOffset: to, Messages: unread, Rules: []string{}}
	since := time.Time{}
	if ps.lastPop != nil {
		since = ps.lastPop.Add(-gapHistoryMargin)
	}
	rows, err := store.DeletedBy(ctx, tx, q.Name, cand.pid, cand.name, from, to, since)
	if err != nil {
		return nil, fmt.Errorf("find what deleted offsets %d..%d of %s/%s: %w", from, to, q.Name, cand.name, err)
	}
	for rows.Next() {
		var rule string
		var at time.Time
		if err := rows.Scan(&rule, &at); err != nil {
			rows.Close()
			return nil, fmt.Errorf("find what deleted offsets of %s/%s: %w", q.Name, cand.name, err)
		}
		g.Rules, g.DeletedAt = append(g.Rules, rule), &at
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find what deleted offsets of %s/%s: %w", q.Name, cand.name, err)
	}
	g.Reason = gapReason(g)
	return g, nil
}

// gapHistoryMargin is how far before the group's last claim the history
// of a gap is looked for.
const gapHistoryMargin = 24 * time.Hour

// gapReason says a gap in a sentence a person can act on.
func gapReason(g *api.Gap) string {
	what := fmt.Sprintf("%d message(s) at offsets %d..%d of %s/%s were deleted before this group consumed them",
		g.Messages, g.FromOffset, g.ToOffset, g.Queue, g.Partition)
	if len(g.Rules) == 0 {
		return what + "; the retention history no longer says by which rule (it is kept METRICS_RETENTION_DAYS)"
	}
	return fmt.Sprintf("%s, by %s (last at %s); see lethe retention history %s", what, strings.Join(ruleNames(g.Rules), " and "),
		g.DeletedAt.UTC().Format(time.RFC3339), g.Queue)
}

// ruleNames names the history's rules by the options that set them.
func ruleNames(rules []string) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		switch r {
		case "retention":
			out[i] = "retentionSeconds"
		case "max_wait":
			out[i] = "maxWaitTimeSeconds"
		case "completed_retention":
			out[i] = "completedRetentionSeconds"
		case "tier_drop", "tier_change", "held_drop":
			out[i] = "retentionTier (" + r + ")"
		default:
			out[i] = r
		}
	}
	return out
}
