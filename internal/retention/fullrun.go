package retention

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/store"
)

// RunFull runs one whole cycle now, the tier check included, waiting for
// another replica's cycle to end first (POST /api/v1/test/retention/run).
func (s *Service) RunFull(ctx context.Context) (*api.RetentionRun, error) {
	for {
		res, err := s.RunFullCycle(ctx)
		if err != nil {
			return nil, err
		}
		if !res.Skipped {
			out := fullRunAnswer(res)
			return &out, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// fullRunAnswer is the test route's answer for one whole cycle.
func fullRunAnswer(res CycleResult) api.RetentionRun {
	total := res.Total()
	out := api.RetentionRun{StartedAt: res.StartedAt, Deleted: total.api(), TierDropped: res.TierDrop.api(),
		HeldDropped: res.HeldDrop.api(), TierChange: res.TierChange.api(), HeldMoved: res.HeldMove.api(),
		TierMoved: res.TierMove.api(), LeavesDropped: res.LeavesDropped, LeafDrops: []api.RetentionLeafDrop{}, SettleWorkMs: millis(res.SettleWork),
		QuarantinePurged: res.QuarantinePurged, ChangesFinished: res.ChangesFinished,
		Reclaimed: map[string]int64{}, Failures: []string{}}
	for _, d := range res.LeafDrops {
		out.LeafDrops = append(out.LeafDrops, api.RetentionLeafDrop{Leaf: d.Leaf, Tier: d.Tier, Bytes: d.Bytes,
			DetachMs: millis(d.Detach), AuditMs: millis(d.Audit), DropMs: millis(d.Drop), StartedAt: d.Started, EndedAt: d.Ended})
	}
	maps.Copy(out.Reclaimed, res.Reclaimed)
	for _, f := range res.Failures {
		out.Failures = append(out.Failures, f.Error())
	}
	return out
}

// EnsureLeaves creates the leaves of the current period (and of the next
// one within leafLead), of the tiers and of the sidecar, off the push
// path, once at start (the tier check and the sidecar phase do it after).
func (s *Service) EnsureLeaves(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("retention: create leaves ahead: %w", err)
	}
	defer conn.Release()
	now := s.cfg.Clock.Now()
	if err := s.leavesAhead(ctx, conn.Conn(), now); err != nil {
		return fmt.Errorf("retention: create leaves ahead: %w", err)
	}
	if err := store.EnsureLeaves(ctx, conn.Conn(), []string{store.TierTxns}, now, sidecarLeavesAhead); err != nil {
		return fmt.Errorf("retention: create sidecar leaves ahead: %w", err)
	}
	return nil
}
