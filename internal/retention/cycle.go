package retention

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// unlockTimeout bounds releasing the lock after a cycle, also one whose
// context was cancelled.
const unlockTimeout = 10 * time.Second

// RunCycle runs one maintenance cycle now, on the loop's own connection:
// take the advisory lock (answering Skipped when another replica holds
// it), build the work list from one reading of the clock, run the
// retention, hash-sidecar and eviction phases step by step, purge old
// metrics rows, clean up empty partitions when due, and release the lock
// whatever happened.
//
// A step that fails is logged, counted and listed in the result's
// Failures, and the cycle goes on with the other partitions and phases.
// RunCycle answers an error only when the cycle stopped early: the
// context ended, the lock could not be asked for, or the connection broke
// (the next cycle opens a new one). Rows deleted before any failure stay
// deleted and are counted.
func (s *Service) RunCycle(ctx context.Context) (CycleResult, error) { return s.runCycle(ctx, false) }

// RunFullCycle is RunCycle with the tier check run whether or not it is
// due (POST /api/v1/test/retention/run): when it returns, every move and
// drop the injected clock calls for is done.
func (s *Service) RunFullCycle(ctx context.Context) (CycleResult, error) {
	return s.runCycle(ctx, true)
}

func (s *Service) runCycle(ctx context.Context, forceTiers bool) (CycleResult, error) {
	s.cycleMu.Lock()
	defer s.cycleMu.Unlock()
	started := time.Now()
	res := CycleResult{StartedAt: s.cfg.Clock.Now()}
	conn, locked, err := s.lock(ctx)
	if err != nil {
		return res, err
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

	err = s.cycle(ctx, conn, forceTiers, &res)
	res.Elapsed = time.Since(started)
	s.finish(ctx, conn, &res, err)
	return res, err
}

// lock takes the advisory lock on the loop's connection. A connection
// found broken (the server restarted since the last cycle) is replaced
// once.
func (s *Service) lock(ctx context.Context) (*pgx.Conn, bool, error) {
	for attempt := 0; ; attempt++ {
		conn, err := s.connection(ctx)
		if err != nil {
			return nil, false, err
		}
		var locked bool
		// Not cancelled with ctx: a cancellation landing while the lock
		// query is in flight could leave the lock taken on the server with
		// no one here knowing to release it.
		lockCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
		err = conn.QueryRow(lockCtx, "SELECT pg_try_advisory_lock($1)", s.cfg.LockID).Scan(&locked)
		cancel()
		if err == nil {
			return conn, locked, nil
		}
		if !conn.IsClosed() || attempt > 0 {
			return nil, false, fmt.Errorf("retention: take lock %d: %w", s.cfg.LockID, err)
		}
	}
}

// cycle builds the work list, then runs the registry's rules in order,
// each rule's step under the loop's promises (Rule). A failed step is
// recorded and the cycle goes on; only an abort (context ended, connection
// broke) ends it early.
func (s *Service) cycle(ctx context.Context, conn *pgx.Conn, forceTiers bool, res *CycleResult) error {
	now := res.StartedAt
	var work []queueWork
	err := s.step(ctx, PhaseWorklist, 0, func(sctx context.Context) error {
		known := s.heads.trusted(now)
		var err error
		if work, err = loadWork(sctx, conn, now, "", known); err != nil {
			s.heads = heads{}
			return err
		}
		s.heads = rememberHeads(work, known)
		return nil
	})
	if err != nil {
		if err := s.failed(ctx, conn, PhaseWorklist, "", "", err, res); err != nil {
			return err
		}
	} else {
		s.metrics.observeQueues(work, now)
	}
	res.Queues, res.PartitionsDue = len(work), partitionsDue(work)
	for _, q := range work {
		res.Partitions += q.Partitions
		res.HeadsRead += q.HeadsRead
	}
	c := &cycleRun{conn: conn, work: work, now: now, forceTiers: forceTiers, res: res}
	for _, r := range s.rules() {
		step := r.step()
		if step == nil {
			continue // applied by the step of r.appliedBy()
		}
		err := step(ctx, s, c)
		if err == nil {
			continue
		}
		if aborts(err) {
			return err
		}
		if err := s.failed(ctx, conn, r.Phase(), "", "", err, res); err != nil {
			return err
		}
	}
	return nil
}

// failed records a failed step, of a partition or (queue and partition
// empty) of a whole phase. It answers an error, ending the cycle, when the
// step failed because the cycle's context ended or its connection broke:
// nothing further could succeed.
func (s *Service) failed(ctx context.Context, conn *pgx.Conn, phase, queue, partition string, err error, res *CycleResult) error {
	if ctx.Err() != nil {
		return abortError{fmt.Errorf("retention: %s phase: %w", phase, ctx.Err())}
	}
	s.metrics.stepFailures.WithLabelValues(phase).Inc()
	if conn.IsClosed() {
		s.cfg.Logger.Error("retention step failed and the connection broke; the cycle stops", "phase", phase,
			"queue", queue, "partition", partition, "error", err)
		return abortError{fmt.Errorf("retention: %s phase on %s/%s: connection lost: %w", phase, queue, partition, err)}
	}
	res.Failures = append(res.Failures, StepFailure{Phase: phase, Queue: queue, Partition: partition, Err: err})
	s.cfg.Logger.Error("retention step failed; the cycle goes on", "phase", phase,
		"queue", queue, "partition", partition, "error", err)
	return nil
}

// finish reports the cycle: metrics, the log line and, when it deleted
// something or failed, its record in lethe.retention_runs.
func (s *Service) finish(ctx context.Context, conn *pgx.Conn, res *CycleResult, err error) {
	s.metrics.cycleDuration.Observe(res.Elapsed.Seconds())
	failed := err != nil || len(res.Failures) > 0
	switch {
	case failed:
		s.metrics.cycles.WithLabelValues("failed").Inc()
	case res.DeletedAnything():
		s.metrics.cycles.WithLabelValues("swept").Inc()
	default:
		s.metrics.cycles.WithLabelValues("idle").Inc()
	}
	if !res.DeletedAnything() && !failed {
		s.cfg.Logger.Debug("retention idle", "queues", res.Queues, "partitions", res.Partitions,
			"heads_read", res.HeadsRead, "elapsed_ms", res.Elapsed.Milliseconds())
		return
	}
	if res.DeletedAnything() {
		s.cfg.Logger.Info(res.summary())
	}
	if conn.IsClosed() {
		s.cfg.Logger.Warn("retention: could not record the cycle: the connection broke")
		return
	}
	errText := res.errorText(err)
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
// closed instead, which ends the session and so releases the lock too (the
// next cycle opens a new one).
func (s *Service) unlock(conn *pgx.Conn) {
	if conn.IsClosed() {
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
	_ = conn.Close(ctx)
}

// step runs one step call: the test hook, then fn under the step timeout,
// then the rest the duty cycle asks for. No transaction or row lock is
// held around it.
func (s *Service) step(ctx context.Context, phase string, n int, fn func(context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.cfg.TestSignals.Step != nil {
		if err := s.cfg.TestSignals.Step(phase, n); err != nil {
			return err
		}
	}
	sctx, cancel := context.WithTimeout(ctx, s.cfg.StepTimeout)
	began := time.Now()
	err := fn(sctx)
	cancel()
	if rerr := s.rest(ctx, time.Since(began)); err == nil {
		err = rerr
	}
	return err
}

// rest waits after a step that took worked, so that the loop is busy at
// most MaxBusy of the time: worked*(1-MaxBusy)/MaxBusy.
func (s *Service) rest(ctx context.Context, worked time.Duration) error {
	if s.cfg.MaxBusy >= 1 {
		return nil
	}
	d := time.Duration(float64(worked) * (1 - s.cfg.MaxBusy) / s.cfg.MaxBusy)
	if hook := s.cfg.TestSignals.Rest; hook != nil {
		hook(worked, d)
		return ctx.Err()
	}
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
