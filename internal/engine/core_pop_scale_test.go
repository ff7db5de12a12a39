package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/engine"
)

// A wildcard pop over 2,000 drained partitions finds the one with work.
// The partitions are made by SQL (as if drained and trimmed by retention)
// so the test spends its time on the pop, not on setup.
func TestCorePopWildcardFindsWorkAmong2000Partitions(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.configure("wide", `{}`)
	var qid int64
	if err := e.pool.QueryRow(e.ctx, `SELECT id FROM lethe.queues WHERE name = 'wide'`).Scan(&qid); err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now()
	if _, err := e.pool.Exec(e.ctx, `
		INSERT INTO lethe.partitions (id, queue_id, name, next_offset, low_watermark, created_at, last_push_at)
		SELECT gen_random_uuid(), $1, 'p-' || lpad(i::text, 4, '0'), 5, 5, $2, $2
		  FROM generate_series(0, 1999) i`, qid, now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	// Group g has a cursor on every partition, all caught up.
	if _, err := e.pool.Exec(e.ctx, `
		INSERT INTO lethe.cursors (partition_id, group_name, committed, last_pop_at, updated_at)
		SELECT p.id, 'g', 4, $2::timestamptz - make_interval(secs => row_number() OVER (ORDER BY p.name)), $2
		  FROM lethe.partitions p WHERE p.queue_id = $1`, qid, now); err != nil {
		t.Fatal(err)
	}
	_, _ = e.pool.Exec(e.ctx, `ANALYZE lethe.partitions; ANALYZE lethe.cursors`)
	if resp := e.pop(engine.PopRequest{Queue: "wide", Group: "g"}); len(resp.Messages) != 0 {
		t.Fatalf("pop with no work got %v", corePayloads(resp))
	}
	e.push("wide", "p-1234", `"here"`)
	for _, group := range []string{"g", ""} {
		start := time.Now()
		resp := e.pop(engine.PopRequest{Queue: "wide", Group: group})
		took := time.Since(start)
		if len(resp.Messages) != 1 || resp.Partition != "p-1234" || resp.Messages[0].Offset != 5 {
			t.Fatalf("group %q: wildcard pop got %+v, want offset 5 of p-1234", group, resp)
		}
		t.Logf("group %q: wildcard pop over 2000 partitions took %s", group, took)
		if took > 2*time.Second {
			t.Errorf("group %q: wildcard pop over 2000 partitions took %s", group, took)
		}
	}
	// And an empty wildcard pop, which scans everything and finds nothing.
	start := time.Now()
	if resp := e.pop(engine.PopRequest{Queue: "wide", Group: "g"}); len(resp.Messages) != 0 {
		t.Fatalf("pop with the only message leased got %v", corePayloads(resp))
	}
	t.Logf("empty wildcard pop over 2000 partitions took %s", time.Since(start))
}

// When concurrent consumers hold the least recently popped candidates (they
// list the same ones), a pop lists more of them each round instead of
// giving up after a few rounds of four. Here another transaction holds the
// cursors of the 36 least recently popped of 40 partitions with work, as
// claiming consumers do: the pop must claim one of the other four, past
// 32 taken candidates (eight rounds of four, where pops gave up before).
func TestCorePopListsMoreWhenOthersTakeItsCandidates(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.configure("busy", `{}`)
	for i := range 40 {
		e.push("busy", fmt.Sprintf("p-%02d", i), `"m"`)
	}
	// Group g has a cursor on every partition, p-00 popped longest ago.
	now := e.clock.Now()
	if _, err := e.pool.Exec(e.ctx, `
		INSERT INTO lethe.cursors (partition_id, group_name, committed, last_pop_at, updated_at)
		SELECT p.id, 'g', -1, $1::timestamptz - make_interval(secs => 100 - (substr(p.name, 3))::int), $1
		  FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id WHERE q.name = 'busy'`, now); err != nil {
		t.Fatal(err)
	}
	tx, err := e.pool.Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(e.ctx)
	if _, err := tx.Exec(e.ctx, `
		SELECT 1 FROM lethe.cursors c JOIN lethe.partitions p ON p.id = c.partition_id
		 WHERE c.group_name = 'g' AND p.name < 'p-36' FOR UPDATE OF c`); err != nil {
		t.Fatal(err)
	}
	resp := e.pop(engine.PopRequest{Queue: "busy", Group: "g"})
	if len(resp.Messages) != 1 || resp.Partition < "p-36" {
		t.Fatalf("pop while p-00..p-35 are being claimed = %d messages from %q, want one from p-36..p-39", len(resp.Messages), resp.Partition)
	}
}
