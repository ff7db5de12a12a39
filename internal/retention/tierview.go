package retention

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/store"
	"github.com/lethe-mq/lethe/internal/tier"
)

// View is GET /api/v1/retention/tiers: every leaf with its tier, range,
// size and drop time, the held area by month and queue, and the tier
// changes awaiting confirmation or running, with progress.
func (s *Service) View(ctx context.Context) (*api.RetentionView, error) {
	now := s.cfg.Clock.Now()
	v := &api.RetentionView{At: now, Partitions: []api.TierPartition{}, Held: []api.HeldMonth{}, Changes: []api.RetentionChange{}}
	leaves, err := store.Leaves(ctx, s.pool)
	if err != nil {
		return nil, fmt.Errorf("retention view: %w", err)
	}
	sizes, err := store.LeafSizes(ctx, s.pool)
	if err != nil {
		return nil, fmt.Errorf("retention view: %w", err)
	}
	var sidecarWindow time.Duration
	if err := s.pool.QueryRow(ctx, `SELECT lethe.sidecar_window()`).Scan(&sidecarWindow); err != nil {
		return nil, fmt.Errorf("retention view: %w", err)
	}
	for _, l := range leaves {
		p := api.TierPartition{Name: l.Name, Tier: l.Tier, From: l.From, To: l.To, State: l.State,
			Rows: sizes[l.Name].Rows, Bytes: sizes[l.Name].Bytes}
		if l.State == store.LeafAttached {
			p.DropsAt = dropsAt(l, sidecarWindow)
		}
		v.Partitions = append(v.Partitions, p)
	}
	held, err := store.HeldByMonth(ctx, s.pool)
	if err != nil {
		return nil, fmt.Errorf("retention view: %w", err)
	}
	for _, h := range held {
		v.Held = append(v.Held, api.HeldMonth{Month: h.Month, Queue: h.Queue, Messages: h.Messages, Bytes: h.Bytes,
			Pending: h.Pending, Quarantined: h.Quarantined})
	}
	if v.Changes, err = s.changes(ctx, ""); err != nil {
		return nil, err
	}
	return v, nil
}

// dropsAt is when the tier check may drop an attached leaf: its end plus
// its tier's window (plus the largest sidecar window for the sidecar);
// nil for forever and held leaves, which wait for emptiness or for
// nothing pending.
func dropsAt(l store.Leaf, sidecarWindow time.Duration) *time.Time {
	var at time.Time
	switch t := tier.Tier(l.Tier); {
	case l.Tier == store.TierTxns:
		at = l.To.Add(sidecarWindow)
	default:
		w, ok := t.Window()
		if !ok {
			return nil
		}
		at = l.To.Add(w)
	}
	return &at
}

// changes lists the tier changes awaiting confirmation or running, of
// one queue or of all.
func (s *Service) changes(ctx context.Context, queue string) ([]api.RetentionChange, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT q.id, q.name, c.from_tier, c.to_tier, c.state, c.delete_messages, c.delete_bytes, c.move_messages,
		       c.move_bytes, c.hold_messages, c.hold_bytes, c.deleted_messages, c.moved_messages, c.held_messages,
		       coalesce(c.next_tier, ''), c.requested_at, c.confirmed_at, c.finished_at
		  FROM lethe.retention_changes c JOIN lethe.queues q ON q.id = c.queue_id
		 WHERE c.state <> 'done' AND ($1 = '' OR q.name = $1)
		 ORDER BY q.name`, queue)
	if err != nil {
		return nil, fmt.Errorf("tier changes: %w", err)
	}
	type row struct {
		id int64
		c  api.RetentionChange
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		c := &x.c
		return x, r.Scan(&x.id, &c.Queue, &c.From, &c.To, &c.State, &c.Delete.Messages, &c.Delete.Bytes,
			&c.Move.Messages, &c.Move.Bytes, &c.Hold.Messages, &c.Hold.Bytes, &c.Deleted, &c.Moved, &c.Held,
			&c.Next, &c.RequestedAt, &c.ConfirmedAt, &c.FinishedAt)
	})
	if err != nil {
		return nil, fmt.Errorf("tier changes: %w", err)
	}
	out := make([]api.RetentionChange, 0, len(list))
	for _, x := range list {
		c := x.c
		c.Left = c.Delete.Messages + c.Move.Messages + c.Hold.Messages
		if c.State == "running" {
			if c.Left, err = store.QueueLeft(ctx, s.pool, x.id, outsideTiers(c.To)); err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

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
