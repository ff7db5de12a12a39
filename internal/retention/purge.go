package retention

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// purgeTarget is a table aged out by the metrics purge: rows whose time
// column is older than the cutoff go, BatchSize at a time, oldest first, by
// an index on that column.
type purgeTarget struct {
	table, column string
	cutoff        time.Time
	deadLetters   bool
	where         string // more of the predicate (a constant, never input)
}

// purge ages out each target (the metrics purge's tables, dead letters),
// cutoffs counted in calendar days. Each chunk is a plain autocommitting
// statement; a failure is logged, counted and swallowed, so it cannot undo
// or stop the deletes the cycle already committed.
func (s *Service) purge(ctx context.Context, conn *pgx.Conn, res *CycleResult, targets ...purgeTarget) {
	errs := []error{res.MetricsPurgeErr}
	for _, t := range targets {
		n, err := s.purgeTable(ctx, conn, t)
		res.MetricsPurged += n
		if t.deadLetters {
			res.DeadLettersPurged += n
		}
		s.metrics.metricsPurged.WithLabelValues(t.table).Add(float64(n))
		if err != nil {
			s.metrics.purgeFailures.Inc()
			s.cfg.Logger.Warn("retention: metrics purge failed; the cycle goes on", "table", t.table, "error", err)
			errs = append(errs, err)
		}
	}
	res.MetricsPurgeErr = errors.Join(errs...)
}

func (s *Service) purgeTable(ctx context.Context, conn *pgx.Conn, t purgeTarget) (int64, error) {
	// Table and column names are constants above, never input.
	sql := fmt.Sprintf(`DELETE FROM %[1]s WHERE id IN (
		SELECT id FROM %[1]s WHERE %[2]s < $1 %[3]s ORDER BY %[2]s LIMIT $2)`, t.table, t.column, t.where)
	var total int64
	for n := 0; ; n++ {
		var deleted int64
		err := s.step(ctx, PhaseMetrics, n, func(sctx context.Context) error {
			tag, err := conn.Exec(sctx, sql, t.cutoff, s.cfg.BatchSize)
			deleted = tag.RowsAffected()
			return err
		})
		if err != nil {
			return total, fmt.Errorf("purge %s: %w", t.table, err)
		}
		total += deleted
		if deleted < int64(s.cfg.BatchSize) {
			return total, nil
		}
	}
}
