package retention

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/store"
)

// sidecarLeavesAhead is how many sidecar leaves after the current one
// exist before any append needs them: with 5-minute leaves and the 5 s
// cycle, ten minutes of pushes that never wait for DDL.
const sidecarLeavesAhead = 2

// sidecarPhase runs on every cycle: it makes the sidecar's leaves ahead and
// drops, whole, each leaf older than every queue's sidecar window. Leaves
// span at most half the widest window (migration 130), so the sidecar holds
// between one window and one window plus a leaf plus a cycle of hashes.
func (s *Service) sidecarPhase(ctx context.Context, conn *pgx.Conn, now time.Time, res *CycleResult) error {
	err := s.step(ctx, PhaseTxns, 0, func(sctx context.Context) error {
		return store.EnsureLeaves(sctx, conn, []string{store.TierTxns}, now, sidecarLeavesAhead)
	})
	if err != nil {
		if err := s.failed(ctx, conn, PhaseTxns, "", "", err, res); err != nil {
			return err
		}
	}
	leaves, err := store.Leaves(ctx, conn)
	if err != nil {
		return fmt.Errorf("retention: sidecar: %w", err)
	}
	cutoff, err := sidecarCutoff(ctx, conn, now)
	if err != nil {
		return err
	}
	for _, l := range leaves {
		if l.Tier != store.TierTxns || (l.State == store.LeafAttached && l.To.After(cutoff)) {
			continue
		}
		if err := s.dropSidecarLeaf(ctx, conn, l, res); err != nil {
			if err := s.failed(ctx, conn, PhaseTxns, "", l.Name, err, res); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropSidecarLeaf drops a leaf of the hash sidecar older than every
// queue's window (or finishes the drop a crash interrupted). The cycle's
// retention_runs row and its log line count the hashes it held; its
// LeafDrops entry times the count (as the audit), the detach and the drop.
func (s *Service) dropSidecarLeaf(ctx context.Context, conn *pgx.Conn, l store.Leaf, res *CycleResult) error {
	d := LeafDrop{Leaf: l.Name, Tier: l.Tier, Started: time.Now()}
	var hashes int64
	if l.State == store.LeafAttached {
		err := s.step(ctx, PhaseTxns, 0, timed(&d.Audit, func(sctx context.Context) error {
			var err error
			hashes, err = store.LeafHashes(sctx, conn, l.Name)
			return err
		}))
		if err != nil {
			return err
		}
	}
	if err := s.step(ctx, PhaseTxns, 0, timed(&d.Detach, func(sctx context.Context) error {
		return store.DetachLeaf(sctx, conn, l.Name)
	})); err != nil {
		return err
	}
	if err := s.step(ctx, PhaseTxns, 0, timed(&d.Drop, func(sctx context.Context) error {
		var err error
		d.Bytes, err = store.DropLeaf(sctx, conn, l.Name)
		return err
	})); err != nil {
		return err
	}
	d.Ended = time.Now()
	res.TxnsPurged += hashes
	s.metrics.txnsPurged.Add(float64(hashes))
	s.leafDropped(res, d)
	return nil
}

// sidecarCutoff is the time before which no queue needs a hash any more:
// now minus lethe.sidecar_window(), the largest GREATEST(dedupWindowSeconds,
// completedRetentionSeconds, 900 s) of any queue.
func sidecarCutoff(ctx context.Context, conn *pgx.Conn, now time.Time) (time.Time, error) {
	var cutoff time.Time
	if err := conn.QueryRow(ctx, `SELECT $1::timestamptz - lethe.sidecar_window()`, now).Scan(&cutoff); err != nil {
		return cutoff, fmt.Errorf("retention: sidecar window: %w", err)
	}
	return cutoff, nil
}
