package retention

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// volumeEnv is a cycle to come of n partitions × m segments (2 messages
// each) in two queues, swept one segment a step (m+1 steps a partition):
// "kept" under completed retention, read by group reader; "lossy" under
// retentionSeconds, subscribed by groups a and b that read nothing.
func volumeEnv(t *testing.T, n, m int) *env {
	t.Helper()
	e := setup(t, func(c *Config) { c.BatchSize = 1 })
	e.configure("kept", map[string]any{"retentionEnabled": true, "completedRetentionSeconds": 60})
	e.configure("lossy", map[string]any{"retentionEnabled": true, "retentionSeconds": 60})
	e.pop("lossy", "", "a", 1)
	e.pop("lossy", "", "b", 1)
	e.fill(n, m)
	return e
}

// fill pushes m segments of 2 messages to each of n partitions of both
// queues and has reader consume kept's.
func (e *env) fill(n, m int) {
	e.t.Helper()
	for p := range n {
		name := fmt.Sprintf("p%02d", p)
		for range m {
			e.pushSegment("kept", name, 2)
			e.pushSegment("lossy", name, 2)
			e.consume("kept", name, "reader", 2)
		}
	}
}

// The history grows with decisions, not with partitions or steps: a cycle
// that deletes n partitions × m segments, one segment a step, writes one
// row per queue and rule and one loss row per group that lost unread
// data, whatever n and m; the figures are exact sums.
func TestHistoryRowsDoNotGrowWithPartitionsOrSteps(t *testing.T) {
	t.Parallel()
	for _, shape := range []struct{ n, m int }{{1, 1}, {3, 4}, {24, 3}} {
		t.Run(fmt.Sprintf("%dx%d", shape.n, shape.m), func(t *testing.T) {
			t.Parallel()
			n, m := shape.n, shape.m
			e := volumeEnv(t, n, m)
			steps := 0
			e.svc.cfg.TestSignals.Step = func(phase string, _ int) error {
				if phase == PhaseRetention {
					steps++
				}
				return nil
			}
			e.clock.Advance(61 * time.Second)
			res := e.cycle()
			if want := int64(n * m); res.Retention.Segments != want || res.CompletedRetention.Segments != want {
				t.Fatalf("deleted retention %+v, completed %+v; want %d segments each", res.Retention, res.CompletedRetention, want)
			}
			if steps < 2*n*m {
				t.Fatalf("the cycle took %d retention steps, want at least %d (one a segment)", steps, 2*n*m)
			}
			if rows := e.count(`SELECT count(*) FROM lethe.retention_history`); rows != 2 {
				t.Fatalf("%d history rows for %d steps, want 2 (one per queue and rule)", rows, steps)
			}
			if rows := e.count(`SELECT count(*) FROM lethe.retention_losses`); rows != 2 {
				t.Fatalf("%d loss rows, want 2 (groups a and b)", rows)
			}
			checkLossyDecision(t, e.history("lossy"), n, m)

			// The next cycle's deletions are a new decision: two rows more.
			e.fill(n, m)
			e.clock.Advance(61 * time.Second)
			e.cycle()
			if rows := e.count(`SELECT count(*) FROM lethe.retention_history`); rows != 4 {
				t.Fatalf("%d history rows after two cycles, want 4", rows)
			}
			if rows := e.count(`SELECT count(*) FROM lethe.retention_losses`); rows != 4 {
				t.Fatalf("%d loss rows after two cycles, want 4", rows)
			}
		})
	}
}

// checkLossyDecision: lossy's one decision covers every partition and
// message, and each group's loss is exact.
func checkLossyDecision(t *testing.T, h []HistoryEntry, n, m int) {
	t.Helper()
	msgs := int64(2 * n * m)
	if len(h) != 1 || h[0].Rule != RuleRetention || h[0].Partitions != n || h[0].Segments != n*m || h[0].Messages != msgs {
		t.Fatalf("lossy history = %+v, want one retention row of %d partitions, %d segments, %d messages", h, n, n*m, msgs)
	}
	e := h[0]
	if len(e.Ranges) == 0 || len(e.Ranges) > min(n, historyRangesMax) {
		t.Fatalf("ranges %+v: want 1 to %d partitions listed", e.Ranges, min(n, historyRangesMax))
	}
	for _, r := range e.Ranges {
		if r.FromOffset == nil || *r.FromOffset != 0 || r.ToOffset == nil || *r.ToOffset != int64(2*m-1) || r.Messages != int64(2*m) {
			t.Fatalf("range %+v: want offsets 0..%d, %d messages", r, 2*m-1, 2*m)
		}
	}
	if one := n == 1; one != (e.FromOffset != nil && e.Partition == "p00") {
		t.Fatalf("partition %q, offsets %v: want them set only for a row of one partition", e.Partition, e.FromOffset)
	}
	if len(e.Lost) != 2 {
		t.Fatalf("lost = %+v, want groups a and b", e.Lost)
	}
	for i, g := range []string{"a", "b"} {
		l := e.Lost[i]
		if l.Group != g || l.Messages != msgs || l.Partitions != n || l.Leased != 0 {
			t.Fatalf("lost[%d] = %+v, want %s lost %d messages in %d partitions", i, l, g, msgs, n)
		}
	}
}

// A cycle that stops half-way (here its context ends after a few steps)
// leaves history for exactly what its committed steps deleted.
func TestAnInterruptedCycleLeavesHistoryForWhatItDeleted(t *testing.T) {
	t.Parallel()
	const n, m = 4, 3
	e := volumeEnv(t, n, m)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	steps := 0
	e.svc.cfg.TestSignals.Step = func(phase string, _ int) error {
		if phase == PhaseRetention {
			if steps++; steps == 7 {
				cancel()
			}
		}
		return nil
	}
	e.clock.Advance(61 * time.Second)
	before := e.count(`SELECT count(*) FROM lethe.segments`)
	if _, err := e.svc.RunCycle(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("RunCycle = %v, want it stopped by the cancelled context", err)
	}
	deleted := before - e.count(`SELECT count(*) FROM lethe.segments`)
	if deleted == 0 || deleted >= 2*n*m {
		t.Fatalf("the interrupted cycle deleted %d of %d segments, want some but not all", deleted, 2*n*m)
	}
	if got := e.count(`SELECT coalesce(sum(segments), 0) FROM lethe.retention_history`); got != deleted {
		t.Fatalf("history records %d segments, %d were deleted", got, deleted)
	}
	lossyDeleted := e.count(`SELECT coalesce(sum(segments), 0) FROM lethe.retention_history WHERE queue_name = 'lossy'`)
	for _, g := range []string{"a", "b"} {
		if lost := e.count(`SELECT coalesce(sum(messages), 0) FROM lethe.retention_losses WHERE group_name = $1`, g); lost != 2*lossyDeleted {
			t.Fatalf("group %s's loss rows say %d messages, lossy lost %d", g, lost, 2*lossyDeleted)
		}
	}
}

// The fold's updates are HOT (no indexed column changes, the pages keep
// room): a decision written by 40 steps over 20 partitions, 240 times,
// leaves heap-only updates and 240 rows. The sizes are logged: the
// figures docs/operations.md's "Footprint" uses (on a quiet machine; how
// much of a cycle's dead versions is pruned before vacuum depends on
// what else holds back the database's horizon, an ANALYZE say, so the
// size is not asserted here: the soak holds it to a budget).
func TestHistoryFoldUpdatesAreHOT(t *testing.T) {
	t.Parallel()
	e := setup(t)
	conn, err := pgx.Connect(e.ctx, e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(e.ctx)
	const cycles, partitions, stepsPer, rounds = 240, 20, 2, 4
	write := func(from, to int) {
		for c := from; c < to; c++ {
			at := t0.Add(time.Duration(c) * 8 * time.Second)
			for p := range partitions {
				for s := range stepsPer {
					if _, err := conn.Exec(e.ctx, `
						INSERT INTO lethe.retention_history (executed_at, queue_name, partition_name, partition_id, rule,
						                                     segments, frames, bytes, from_offset, to_offset)
						VALUES ($1, 'orders', $2, md5($2)::uuid, 'completed_retention', 1, 10, 10240, $3::bigint, $3::bigint + 9)`,
						at, fmt.Sprintf("partition-%02d", p), int64(c*stepsPer*10+s*10)); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	heap := func() int64 {
		var n int64
		if err := conn.QueryRow(e.ctx, `SELECT pg_relation_size('lethe.retention_history')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Autovacuum makes pruned space known to inserts; here a VACUUM
	// after each round stands for it.
	for r := range rounds {
		write(r*cycles/rounds, (r+1)*cycles/rounds)
		if _, err := conn.Exec(e.ctx, `VACUUM lethe.retention_history`); err != nil {
			t.Fatal(err)
		}
		t.Logf("heap %d bytes after %d cycles", heap(), (r+1)*cycles/rounds)
	}
	if _, err := conn.Exec(e.ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	var upd, hot, rows, rowBytes, tableBytes int64
	if err := conn.QueryRow(e.ctx, `
		SELECT s.n_tup_upd, s.n_tup_hot_upd,
		       (SELECT count(*) FROM lethe.retention_history),
		       (SELECT avg(pg_column_size(h.*))::bigint FROM lethe.retention_history h),
		       pg_total_relation_size('lethe.retention_history')
		  FROM pg_stat_user_tables s WHERE s.relid = 'lethe.retention_history'::regclass`).
		Scan(&upd, &hot, &rows, &rowBytes, &tableBytes); err != nil {
		t.Fatal(err)
	}
	if rows != cycles {
		t.Fatalf("%d rows for %d cycles", rows, cycles)
	}
	if want := int64(cycles * (partitions*stepsPer - 1)); upd != want || hot < want*9/10 {
		t.Fatalf("%d updates, %d of them HOT; want %d, at least 90%% HOT", upd, hot, want)
	}
	t.Logf("%d rows, %d bytes a row (pg_column_size), %d updates %d HOT, %d bytes a row with its indexes",
		rows, rowBytes, upd, hot, tableBytes/rows)
}

// historyRangesMax is how many partitions a row's ranges list at most
// (lethe.history_ranges_add, migration 110; fewer when their names are
// long: the list stops at about 256 bytes).
const historyRangesMax = 16
