package inspect

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/store"
	"github.com/lethe-mq/lethe/internal/tier"
)

// View is GET /api/v1/retention/tiers: every leaf with its tier, range,
// size and drop time, the held area by month and queue, and the tier
// changes awaiting confirmation or running, with progress.
func (r *Reader) RetentionView(ctx context.Context) (*api.RetentionView, error) {
	now := r.clock.Now()
	v := &api.RetentionView{At: now, Partitions: []api.TierPartition{}, Held: []api.HeldMonth{}, Changes: []api.RetentionChange{}}
	leaves, err := store.Leaves(ctx, r.pool)
	if err != nil {
		return nil, fmt.Errorf("retention view: %w", err)
	}
	sizes, err := store.LeafSizes(ctx, r.pool)
	if err != nil {
		return nil, fmt.Errorf("retention view: %w", err)
	}
	var sidecarWindow time.Duration
	if err := r.pool.QueryRow(ctx, `SELECT lethe.sidecar_window()`).Scan(&sidecarWindow); err != nil {
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
	held, err := store.HeldByMonth(ctx, r.pool)
	if err != nil {
		return nil, fmt.Errorf("retention view: %w", err)
	}
	for _, h := range held {
		v.Held = append(v.Held, api.HeldMonth{Month: h.Month, Queue: h.Queue, Messages: h.Messages, Bytes: h.Bytes,
			Pending: h.Pending, Quarantined: h.Quarantined})
	}
	if v.Changes, err = r.TierChanges(ctx, ""); err != nil {
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

// TierChanges lists the tier changes awaiting confirmation or running, of
// one queue or of all (the tier view, explain).
func (r *Reader) TierChanges(ctx context.Context, queue string) ([]api.RetentionChange, error) {
	rows, err := r.pool.Query(ctx, `
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
			if c.Left, err = store.QueueLeft(ctx, r.pool, x.id, tier.Outside(c.To)); err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}
