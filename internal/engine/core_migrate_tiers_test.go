package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/frame"
	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/store"
)

// A database of the layout before time partitions (every migration but 050-053)
// migrates in place: its segments become the legacy leaf of the forever
// set and its hashes the legacy sidecar leaf. Every message is still
// served, in order, to a group that was half-way and to a new one; a
// group's cursor and lease state carry over; old transaction ids are still
// duplicates; new pushes land after the old messages.
func TestCoreMigration050KeepsEveryMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewEmptyDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	// A database of the layout before tiers: every migration but 050-053
	// and those that redefine their functions or the sidecar (130, 140, 150, 153); later ones,
	// such as the streams' 080 and 081, may have run already.
	migrateWithout(t, pool, func(v int) bool { return v >= 50 && v <= 53 || slices.Contains([]int{130, 140, 150, 153}, v) })
	pids := []uuid.UUID{uuid.New(), uuid.New()}
	if _, err := pool.Exec(ctx, `
		WITH q AS (INSERT INTO lethe.queues (name, created_at, updated_at) VALUES ('old', $1, $1) RETURNING id)
		INSERT INTO lethe.partitions (id, queue_id, name, created_at)
		SELECT $2::uuid, id, 'a', $1 FROM q UNION ALL SELECT $3::uuid, id, 'b', $1 FROM q`, coreT0, pids[0], pids[1]); err != nil {
		t.Fatal(err)
	}
	// Three segments per partition, the old way (lethe.append of 003).
	for _, pid := range pids {
		for seg := range 3 {
			var blob []byte
			var hashes []int64
			var lens []int32
			for i := range 4 {
				txn := fmt.Sprintf("%s-%d-%d", pid.String()[:4], seg, i)
				f := frame.Encode(frame.Message{CreatedAt: coreT0, TxnID: txn, Payload: []byte(fmt.Sprintf(`"%d.%d"`, seg, i))})
				blob, hashes, lens = append(blob, f...), append(hashes, store.TxnHash(txn)), append(lens, int32(len(f)))
			}
			if _, err := pool.Exec(ctx, `SELECT * FROM lethe.append($1, $2, $3, $4, $5, $5, $5)`,
				pid, hashes, lens, blob, coreT0); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Group g is half-way through partition a.
	if _, err := pool.Exec(ctx, `INSERT INTO lethe.subscriptions (queue_id, group_name, created_at) SELECT id, 'g', $1 FROM lethe.queues`,
		coreT0); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO lethe.cursors (partition_id, group_name, committed, updated_at) VALUES ($1, 'g', 5, $2)`,
		pids[0], coreT0); err != nil {
		t.Fatal(err)
	}
	migrateOldDatabase(t, pool)
	var legacy int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM lethe.segments_forever_legacy`).Scan(&legacy); err != nil || legacy != 6 {
		t.Fatalf("legacy leaf holds %d segments (%v), want the 6 written before the migration", legacy, err)
	}

	clk := clock.NewFake(coreT0.Add(time.Minute))
	eng := engine.New(pool, engine.Config{Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(eng.Close)
	e := &coreEnv{t: t, ctx: ctx, eng: eng, pool: pool, clock: clk}
	dup := e.pushItems(api.PushItem{Queue: "old", Partition: "a", TransactionID: pids[0].String()[:4] + "-0-0", Payload: []byte(`"again"`)})
	if dup[0].Status != api.StatusDuplicate {
		t.Errorf("a transaction id stored before the migration pushed again: %s, want duplicate", dup[0].Status)
	}
	e.push("old", "a", `"new"`)
	// Every leaf (the legacy ones, those the push created) has its table's
	// autovacuum settings: 090 ran before the tiers here, 053 after.
	var bare []string
	if err := pool.QueryRow(ctx, `
		SELECT coalesce(array_agg(t.relid::regclass::text), '{}')
		  FROM unnest(ARRAY['lethe.segments', 'lethe.txns']::regclass[]) root,
		       pg_catalog.pg_partition_tree(root) t JOIN pg_catalog.pg_class c ON c.oid = t.relid
		 WHERE t.isleaf AND NOT coalesce(c.reloptions, '{}') && ARRAY['autovacuum_vacuum_scale_factor=0.05',
		                                                             'autovacuum_vacuum_scale_factor=0.02']`).Scan(&bare); err != nil {
		t.Fatal(err)
	}
	if len(bare) > 0 {
		t.Errorf("leaves without their table's autovacuum settings after the upgrade: %v", bare)
	}

	got := drain(e, engine.PopRequest{Queue: "old", Partition: "a", Group: "g", Batch: 100})
	if want := `"1.2" "1.3" "2.0" "2.1" "2.2" "2.3" "new"`; got != want {
		t.Errorf("group g after the migration read %s, want %s", got, want)
	}
	got = drain(e, engine.PopRequest{Queue: "old", Partition: "b", Group: "fresh", Batch: 100})
	if want := `"0.0" "0.1" "0.2" "0.3" "1.0" "1.1" "1.2" "1.3" "2.0" "2.1" "2.2" "2.3"`; got != want {
		t.Errorf("a new group on partition b read %s, want %s", got, want)
	}
}

// drain pops and acks until nothing is left, and returns the payloads in
// the order served.
func drain(e *coreEnv, req engine.PopRequest) string {
	e.t.Helper()
	out := ""
	for range 100 {
		resp := e.pop(req)
		if len(resp.Messages) == 0 {
			return out
		}
		for _, m := range resp.Messages {
			if out != "" {
				out += " "
			}
			out += string(m.Data)
			e.ackMsg(m, "completed")
		}
	}
	e.t.Fatal("still popping after 100 rounds")
	return out
}
