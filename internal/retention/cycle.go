package retention

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// unlockTimeout bounds releasing the lock after a cycle, also one whose
// context was cancelled.
const unlockTimeout = 10 * time.Second

// RunCycle runs one maintenance cycle now, on one pooled connection: take
// the advisory lock (answering Skipped when another replica holds it),
// build the work list from one reading of the clock, run the retention,
// hash-sidecar and eviction phases step by step, purge old metrics rows,
// clean up empty partitions when due, and release the lock whatever
// happened. Rows a failed cycle deleted before the error stay deleted and
// are counted in the result.
func (s *Service) RunCycle(ctx context.Context) (CycleResult, error) {
	started := time.Now()
	res := CycleResult{StartedAt: s.cfg.Clock.Now()}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return res, fmt.Errorf("retention: acquire connection: %w", err)
	}
	defer conn.Release()
	var locked bool
	// Not cancelled with ctx: a cancellation landing while the lock query
	// is in flight could leave the lock taken on the server with no one
	// here knowing to release it.
	lockCtx, cancelLock := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
	err = conn.QueryRow(lockCtx, "SELECT pg_try_advisory_lock($1)", s.cfg.LockID).Scan(&locked)
	cancelLock()
	if err != nil {
		return res, fmt.Errorf("retention: take lock %d: %w", s.cfg.LockID, err)
	}
	if !locked {
		res.Skipped = true
		res.Elapsed = time.Since(started)
		s.metrics.skipped.Inc()
		s.metrics.clearQueueGauges()
		s.cfg.Logger.Debug("retention skipped: another replica holds the lock", "lock_id", s.cfg.LockID)
		return res, nil
	}
	defer s.unlock(conn)

	err = s.cycle(ctx, conn.Conn(), &res)
	res.Elapsed = time.Since(started)
	s.finish(ctx, conn.Conn(), &res, err)
	return res, err
}

// cycle runs the phases in order; the first error ends it.
func (s *Service) cycle(ctx context.Context, conn *pgx.Conn, res *CycleResult) error {
	now := res.StartedAt
	work, err := loadWork(ctx, conn, now, "")
	if err != nil {
		return err
	}
	res.Queues, res.Partitions = queueCount(work), len(work)
	s.metrics.observeQueues(work, now)

	if err := s.retentionPhase(ctx, conn, work, now, res); err != nil {
		return err
	}
	if err := s.txnPhase(ctx, conn, work, res); err != nil {
		return err
	}
	if err := s.evictionPhase(ctx, conn, work, now, res); err != nil {
		return err
	}
	s.metricsPurge(ctx, conn, now, res)
	return s.cleanupPhase(ctx, conn, now, res)
}

// finish reports the cycle: metrics, the log line and, when it deleted
// something or failed, its record in lethe.retention_runs.
func (s *Service) finish(ctx context.Context, conn *pgx.Conn, res *CycleResult, err error) {
	s.metrics.cycleDuration.Observe(res.Elapsed.Seconds())
	switch {
	case err != nil:
		s.metrics.cycles.WithLabelValues("failed").Inc()
	case res.DeletedAnything():
		s.metrics.cycles.WithLabelValues("swept").Inc()
	default:
		s.metrics.cycles.WithLabelValues("idle").Inc()
	}
	if !res.DeletedAnything() && err == nil {
		s.cfg.Logger.Debug("retention idle", "queues", res.Queues, "partitions", res.Partitions,
			"elapsed_ms", res.Elapsed.Milliseconds())
		return
	}
	if res.DeletedAnything() {
		s.cfg.Logger.Info(res.summary())
	}
	var errText *string
	if err != nil {
		t := err.Error()
		errText = &t
	}
	total := res.Total()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
	defer cancel()
	_, rerr := conn.Exec(rctx, `
		INSERT INTO lethe.retention_runs (started_at, elapsed_ms, queues, segments_deleted, frames_deleted,
		       bytes_deleted, txns_purged, max_wait_evicted, partitions_deleted, subscriptions_deleted,
		       metrics_purged, error)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		res.StartedAt, res.Elapsed.Milliseconds(), res.Queues, total.Segments-res.MaxWait.Segments, total.Frames,
		total.Bytes, res.TxnsPurged, res.MaxWait.Segments, res.PartitionsDeleted, res.SubscriptionsDeleted,
		res.MetricsPurged, errText)
	if rerr != nil {
		s.cfg.Logger.Warn("retention: could not record the cycle", "error", rerr)
	}
}

// unlock releases the advisory lock. If that fails the connection is
// closed instead, which ends the session and so releases the lock too: a
// pooled connection must never go back to the pool holding it.
func (s *Service) unlock(conn *pgxpool.Conn) {
	if conn.Conn().IsClosed() {
		return // the session ended, and its locks with it
	}
	ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
	defer cancel()
	var released bool
	err := conn.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", s.cfg.LockID).Scan(&released)
	if err == nil && released {
		return
	}
	if err == nil {
		err = errors.New("the lock was not held")
	}
	s.cfg.Logger.Warn("retention: releasing the lock failed; closing the connection instead", "error", err)
	_ = conn.Conn().Close(ctx)
}

// between runs the test hook between two steps, and stops the phase when
// the context is done.
func (s *Service) between(ctx context.Context, phase string, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.cfg.TestSignals.Step != nil {
		return s.cfg.TestSignals.Step(phase, n)
	}
	return nil
}

// stepContext bounds one step call.
func (s *Service) stepContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.StepTimeout)
}
