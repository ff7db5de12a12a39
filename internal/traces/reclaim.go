package traces

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// RuleRetention names the traces rule in lethe.reclaim_history and the
// metrics.
const RuleRetention = "trace_retention"

// Reclaimer is the traces rule of the retention loop's reclaim phase
// (retention.Reclaimer): traces older than RetentionDays, oldest first.
func (s *Service) Reclaimer() RetentionReclaimer {
	return RetentionReclaimer{days: s.cfg.RetentionDays}
}

// RetentionReclaimer deletes traces older than its window.
type RetentionReclaimer struct{ days int }

// Rule names the rule.
func (RetentionReclaimer) Rule() string { return RuleRetention }

// Options are the settings the rule reads.
func (RetentionReclaimer) Options() []string { return []string{"TRACES_RETENTION_DAYS"} }

// Due says how the rule finds what is due.
func (RetentionReclaimer) Due() string {
	return "lethe.traces' index on created_at: the oldest traces first"
}

// Bound is the bound the rule promises.
func (RetentionReclaimer) Bound() string {
	return "between D and D + I after their creation"
}

// Step deletes at most batch traces created more than days calendar days
// before now, with the audit row of what it deleted, in one statement.
func (r RetentionReclaimer) Step(ctx context.Context, conn *pgx.Conn, now time.Time, batch int) (int64, bool, error) {
	cutoff := now.AddDate(0, 0, -r.days)
	var n int64
	err := conn.QueryRow(ctx, `
		WITH del AS (
			DELETE FROM lethe.traces WHERE id IN (
				SELECT id FROM lethe.traces WHERE created_at < $1 ORDER BY created_at LIMIT $2)
			RETURNING created_at
		), audit AS (
			INSERT INTO lethe.reclaim_history (executed_at, rule, subject, rows, oldest, newest)
			SELECT $3, $4, '', count(*), min(created_at), max(created_at) FROM del HAVING count(*) > 0
		)
		SELECT count(*) FROM del`, cutoff, batch, now, RuleRetention).Scan(&n)
	if err != nil {
		return n, false, fmt.Errorf("reclaim traces created before %s: %w", cutoff.Format(time.RFC3339), err)
	}
	return n, n < int64(batch), nil
}
