package retention

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/store"
	"github.com/lethe-mq/lethe/internal/tier"
)

// tierCheckKey is the lethe.settings row whose updated_at spaces the tier
// check across every replica.
const tierCheckKey = "retention.tier_check"

// leafLead is how long before its period begins a leaf is made: at least
// two tier checks at the longest RETENTION_TIER_INTERVAL (a day), so the
// leaf is there before any append needs it. Not more: every read of a
// partition starts a scan on every segment leaf (PostgreSQL 15
// initialises them all before pruning any), and two leaves made a month
// ahead for each of forever and held tripled a new deployment's leaves
// (end to end at 1,000 msg/s, three pairs: p50 8.0–8.3 ms with this lead,
// 8.7–9.6 with two periods ahead; BENCHMARKS).
const leafLead = 2 * 24 * time.Hour

// tierPhase runs the tier check when it is due (every TierInterval across
// replicas) or forced: leaves ahead, expired tier leaves settled and
// dropped, held months and empty forever leaves dropped, then the held and
// quarantined gauges. The sidecar's leaves are the sidecar phase's.
func (s *Service) tierPhase(ctx context.Context, conn *pgx.Conn, now time.Time, force bool, res *CycleResult) error {
	if !force {
		due, err := s.claimEvery(ctx, conn, tierCheckKey, s.cfg.TierInterval, now)
		if err != nil || !due {
			return err
		}
	}
	res.TierCheckRan = true
	if err := s.step(ctx, PhaseTiers, 0, func(sctx context.Context) error { return s.leavesAhead(sctx, conn, now) }); err != nil {
		if err := s.failed(ctx, conn, PhaseTiers, "", "", err, res); err != nil {
			return err
		}
	}
	leaves, err := store.Leaves(ctx, conn)
	if err != nil {
		return fmt.Errorf("retention: tier check: %w", err)
	}
	for _, l := range leaves {
		if l.Tier == store.TierTxns {
			continue // the sidecar phase's, every cycle
		}
		if err := s.checkLeaf(ctx, conn, l, now, res); err != nil {
			if err := s.failed(ctx, conn, PhaseTiers, "", l.Name, err, res); err != nil {
				return err
			}
		}
	}
	return s.heldGauges(ctx, conn)
}

// checkLeaf drops one leaf if its time has come, resuming a drop a crash
// interrupted.
func (s *Service) checkLeaf(ctx context.Context, conn *pgx.Conn, l store.Leaf, now time.Time, res *CycleResult) error {
	if l.State != store.LeafAttached {
		return s.dropLeaf(ctx, conn, l, now, res)
	}
	switch t := tier.Tier(l.Tier); {
	case t == tier.Held:
		if l.To.After(now) {
			return nil
		}
		pending, err := store.LeafPending(ctx, conn, l.Name)
		if err != nil || pending {
			return err
		}
		return s.dropLeaf(ctx, conn, l, now, res)
	case t == tier.Forever:
		if l.To.After(now) {
			return nil
		}
		empty, err := store.LeafEmpty(ctx, conn, l.Name)
		if err != nil || !empty {
			return err
		}
		return s.dropLeaf(ctx, conn, l, now, res)
	default:
		w, _ := t.Window()
		if l.To.After(now.Add(-w)) {
			return nil
		}
		if err := s.settleLeaf(ctx, conn, l, now, res); err != nil {
			return err
		}
		return s.dropLeaf(ctx, conn, l, now, res)
	}
}

// settleLeaf moves out of an expired leaf, partition by partition, what
// must outlive it: segments their queue's (new) tier still keeps, and
// segments with frames some group wants (to the held area).
func (s *Service) settleLeaf(ctx context.Context, conn *pgx.Conn, l store.Leaf, now time.Time, res *CycleResult) error {
	return s.inBatches(ctx, PhaseTiers, uuid.Nil, func(sctx context.Context, after uuid.UUID) ([]uuid.UUID, error) {
		return store.LeafPartitions(sctx, conn, l.Name, after, s.cfg.BatchSize)
	}, func(pid uuid.UUID) error {
		return s.settlePartition(ctx, conn, pid, l, now, res)
	})
}

func (s *Service) settlePartition(ctx context.Context, conn *pgx.Conn, pid uuid.UUID, l store.Leaf, now time.Time, res *CycleResult) error {
	from, need, err := store.SettleStart(ctx, conn, pid, l.Name, l.Tier)
	if err != nil || !need {
		return err
	}
	for n := 0; ; n++ {
		var st store.Settled
		err := s.step(ctx, PhaseTiers, n, timed(&res.SettleWork, func(sctx context.Context) error {
			var err error
			st, err = store.SettleStep(sctx, conn, pid, l.Name, nil, from, s.cfg.BatchSize, now)
			return err
		}))
		if err != nil {
			return fmt.Errorf("settle partition %s: %w", pid, err)
		}
		s.settled(res, st)
		if st.Done {
			return nil
		}
		from = st.Next
	}
}

// dropLeaf detaches a leaf (without an ACCESS EXCLUSIVE lock on its
// parent), writes per lethe partition the audit row of what goes with it
// (purging dead letters of quarantined: purge queues, moving low
// watermarks), and drops it. Every part resumes where a crash stopped it.
// The result's LeafDrops and the log line say what each part cost.
func (s *Service) dropLeaf(ctx context.Context, conn *pgx.Conn, l store.Leaf, now time.Time, res *CycleResult) error {
	d := LeafDrop{Leaf: l.Name, Tier: l.Tier, Started: time.Now()}
	if err := s.step(ctx, PhaseTiers, 0, timed(&d.Detach, func(sctx context.Context) error {
		return store.DetachLeaf(sctx, conn, l.Name)
	})); err != nil {
		return err
	}
	rule := RuleTierDrop
	if l.Tier == string(tier.Held) {
		rule = RuleHeldDrop
	}
	after := uuid.Nil
	if l.AuditedThrough != nil {
		after = *l.AuditedThrough
	}
	if err := s.auditLeaf(ctx, conn, leafAudit{leaf: l.Name, rule: rule, now: now, work: &d.Audit}, after, res); err != nil {
		return err
	}
	if err := s.step(ctx, PhaseTiers, 0, timed(&d.Drop, func(sctx context.Context) error {
		var err error
		d.Bytes, err = store.DropLeaf(sctx, conn, l.Name)
		return err
	})); err != nil {
		return err
	}
	d.Ended = time.Now()
	s.leafDropped(res, d)
	return nil
}

// leafAudit is one detached leaf's audit: its name, the rule of its rows,
// the cycle's now, and where the steps' work time adds up.
type leafAudit struct {
	leaf string
	rule string
	now  time.Time
	work *time.Duration
}

// auditLeaf runs the per-partition drop steps of a detached leaf.
func (s *Service) auditLeaf(ctx context.Context, conn *pgx.Conn, a leafAudit, after uuid.UUID, res *CycleResult) error {
	return s.inBatches(ctx, PhaseTiers, after, func(sctx context.Context, from uuid.UUID) ([]uuid.UUID, error) {
		began := time.Now()
		defer func() { *a.work += time.Since(began) }()
		return store.LeafPartitions(sctx, conn, a.leaf, from, s.cfg.BatchSize)
	}, func(pid uuid.UUID) error {
		return s.dropPartition(ctx, conn, a, pid, res)
	})
}

func (s *Service) dropPartition(ctx context.Context, conn *pgx.Conn, a leafAudit, pid uuid.UUID, res *CycleResult) error {
	for n := 0; ; n++ {
		var d store.Dropped
		err := s.step(ctx, PhaseTiers, n, timed(a.work, func(sctx context.Context) error {
			var err error
			d, err = store.DropPartitionStep(sctx, conn, a.leaf, pid, a.rule, s.cfg.BatchSize, a.now)
			return err
		}))
		if err != nil {
			return err
		}
		res.QuarantinePurged += d.DeadLetters
		amount := Amount{Segments: d.Segments, Frames: d.Frames, Bytes: d.Bytes}
		if total := res.amount(a.rule); total != nil {
			total.add(amount)
		}
		if amount.Segments > 0 {
			s.metrics.deleted(a.rule, amount)
		}
		if d.Done {
			return nil
		}
	}
}

// leavesAhead creates the leaves of the current period, and of the next
// one when it begins within leafLead, of every tier a queue uses or is
// changing to, of forever and of held.
func (s *Service) leavesAhead(ctx context.Context, conn *pgx.Conn, now time.Time) error {
	rows, err := conn.Query(ctx, `
		SELECT retention_tier FROM lethe.queues
		UNION SELECT to_tier FROM lethe.retention_changes WHERE state <> 'done'
		UNION SELECT unnest(ARRAY['forever', 'held'])`)
	if err != nil {
		return err
	}
	tiers, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	if err := store.EnsureLeaves(ctx, conn, tiers, now, 0); err != nil {
		return err
	}
	return store.EnsureLeaves(ctx, conn, tiers, now.Add(leafLead), 0)
}

// heldGauges sets lethe_held_messages, lethe_held_bytes and
// lethe_quarantined_messages per queue.
func (s *Service) heldGauges(ctx context.Context, conn *pgx.Conn) error {
	held, err := store.HeldTotals(ctx, conn)
	if err != nil {
		return fmt.Errorf("retention: tier check: %w", err)
	}
	s.metrics.observeHeld(held)
	return nil
}

// claimEvery claims the periodic job named key: the update happens, and
// a row comes back, only when its last run is every old (or in the
// future, after the clock was set back).
func (s *Service) claimEvery(ctx context.Context, conn *pgx.Conn, key string, every time.Duration, now time.Time) (bool, error) {
	rows, err := conn.Query(ctx, `
		INSERT INTO lethe.settings (key, value, updated_at)
		VALUES ($1, jsonb_build_object('lastRunAt', $2::timestamptz), $2)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
		 WHERE lethe.settings.updated_at <= $2::timestamptz - make_interval(secs => $3)
		    OR lethe.settings.updated_at > $2::timestamptz
		RETURNING 1`, key, now, every.Seconds())
	if err != nil {
		return false, fmt.Errorf("retention: schedule %s: %w", key, err)
	}
	defer rows.Close()
	due := rows.Next()
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("retention: schedule %s: %w", key, err)
	}
	return due, nil
}
