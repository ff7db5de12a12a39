package retention

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/schema"
	"github.com/lethe-mq/lethe/internal/schema/schematest"
)

// Rows written before migration 110 (one per step and partition, losses
// in their own column) read as they did after it: one partition each,
// their offsets, each group's loss; and the next cycle's rows are folded.
func TestHistoryRowsFromBefore110ReadTheSame(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.NewEmptyDatabase(t)
	pool := newPool(t, dsn)
	if err := schematest.ApplyLegacy(ctx, pool, func(v int) bool { return v < 110 }); err != nil {
		t.Fatal(err)
	}
	// Two steps of one cycle on partitions p and r, the old way.
	if _, err := pool.Exec(ctx, `
		INSERT INTO lethe.retention_history (executed_at, queue_name, partition_name, partition_id, rule,
		                                     segments, frames, bytes, from_offset, to_offset, lost)
		VALUES ($1, 'q', 'p', gen_random_uuid(), 'retention', 2, 6, 60, 0, 5,
		        '[{"group": "g", "messages": 4, "fromOffset": 2, "toOffset": 5, "leased": 1}]'),
		       ($1, 'q', 'r', gen_random_uuid(), 'retention', 1, 3, 30, 7, 9, NULL)`, t0); err != nil {
		t.Fatal(err)
	}
	if err := schematest.ApplyLegacy(ctx, pool, schematest.All); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Migrate(ctx, pool); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	clk := clock.NewFake(t0)
	eng := engine.New(pool, engine.Config{Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(eng.Close)
	e := &env{t: t, ctx: ctx, dsn: dsn, pool: pool, eng: eng, clock: clk, logs: &syncBuffer{}}
	e.svc = e.newService(pool)

	h := e.history("q")
	if len(h) != 2 {
		t.Fatalf("history = %+v, want the two old rows", h)
	}
	byPartition := map[string]HistoryEntry{h[0].Partition: h[0], h[1].Partition: h[1]}
	p, r := byPartition["p"], byPartition["r"]
	if p.Partitions != 1 || p.Messages != 6 || *p.FromOffset != 0 || *p.ToOffset != 5 || len(p.Ranges) != 1 ||
		p.Ranges[0].Partition != "p" || p.Ranges[0].Messages != 6 {
		t.Fatalf("old row p = %+v, want one partition, offsets 0..5, 6 messages", p)
	}
	if len(p.Lost) != 1 || !isLoss(p.Lost[0], "g", 4, 2, 5, 1) || p.Lost[0].Ranges[0].Partition != "p" {
		t.Fatalf("old row p lost %+v, want g's 4 (offsets 2..5, 1 leased) in p", p.Lost)
	}
	if r.Partitions != 1 || *r.FromOffset != 7 || len(r.Lost) != 0 {
		t.Fatalf("old row r = %+v, want one partition from offset 7, no loss", r)
	}
	lost, err := e.svc.reads.RetentionHistory(ctx, HistoryQuery{Queue: "q", From: t0, To: t0, LostOnly: true, Limit: 10})
	if err != nil || len(lost) != 1 || lost[0].Partition != "p" {
		t.Fatalf("lostOnly = %+v, %v; want the old row p", lost, err)
	}

	// A new cycle's steps fold into one row beside the old ones.
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 60})
	e.pushSegment("q", "a", 1)
	e.pushSegment("q", "b", 1)
	clk.Advance(61e9)
	if res := e.cycle(); res.Retention.Segments != 2 {
		t.Fatalf("deleted %+v, want 2 segments", res.Retention)
	}
	if h := e.history("q"); len(h) != 3 || h[0].Partitions != 2 || h[0].Segments != 2 {
		t.Fatalf("history = %+v, want the new decision (2 partitions) and the two old rows", h)
	}
}
