package retention

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"
)

// widePartitions is how many partitions the cost test gives its queue;
// LETHE_WORKLIST_PARTITIONS=10000 measures at the 10,000 partitions of the
// benchmark goals.
func widePartitions(t *testing.T) int {
	if s := os.Getenv("LETHE_WORKLIST_PARTITIONS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("LETHE_WORKLIST_PARTITIONS=%q: want a positive count", s)
		}
		return n
	}
	return 2000
}

// fillWide gives queue n partitions of one segment each, written in a few
// statements rather than n pushes (the work list does not read frames).
func (e *env) fillWide(queue string, n int) {
	e.t.Helper()
	e.configure(queue, map[string]any{})
	at := e.clock.Now()
	for _, sql := range []string{
		`SELECT lethe.ensure_leaf(q.retention_tier, $3) FROM lethe.queues q WHERE q.name = $1 AND $2 > 0`,
		`INSERT INTO lethe.partitions (id, queue_id, name, created_at, next_offset, last_push_at)
		 SELECT gen_random_uuid(), q.id, 'w' || i, $3, 1, $3
		   FROM lethe.queues q, generate_series(1, $2) i WHERE q.name = $1`,
		`INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count, first_at, last_at,
		                             byte_size, frames, tier, appended_at)
		 SELECT p.id, 0, 0, 1, $3, $3, 1, '\x00', q.retention_tier, $3
		   FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id WHERE q.name = $1 AND $2 > 0`,
		`ANALYZE lethe.partitions`,
	} {
		args := []any{queue, n, at}
		if sql == `ANALYZE lethe.partitions` {
			args = nil
		}
		if _, err := e.pool.Exec(e.ctx, sql, args...); err != nil {
			e.t.Fatalf("fill %s with %d partitions: %v", queue, n, err)
		}
	}
}

// worklistCost is what one execution of the work list cost PostgreSQL:
// shared buffers hit or read, and its execution time.
type worklistCost struct {
	Buffers int64
	Elapsed time.Duration
}

// explainWorklist runs the work list under EXPLAIN (ANALYZE, BUFFERS) with
// args.
func (e *env) explainWorklist(args ...any) worklistCost {
	e.t.Helper()
	var raw []byte
	if err := e.pool.QueryRow(e.ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+worklistSQL, args...).Scan(&raw); err != nil {
		e.t.Fatalf("explain the work list: %v", err)
	}
	var out []struct {
		Plan struct {
			Hit  int64 `json:"Shared Hit Blocks"`
			Read int64 `json:"Shared Read Blocks"`
		}
		ExecutionTime float64 `json:"Execution Time"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out) != 1 {
		e.t.Fatalf("explain the work list: %v in %s", err, raw)
	}
	return worklistCost{Buffers: out[0].Plan.Hit + out[0].Plan.Read,
		Elapsed: time.Duration(out[0].ExecutionTime * float64(time.Millisecond))}
}

// timeWorklist is the best of three round trips of the work list with
// known heads, as the loop runs it. Logged, never asserted: the machine
// may be shared.
func (e *env) timeWorklist(known heads) time.Duration {
	e.t.Helper()
	best := time.Duration(0)
	for range 3 {
		began := time.Now()
		if _, err := loadWork(e.ctx, e.pool, e.clock.Now(), "", known); err != nil {
			e.t.Fatal(err)
		}
		if took := time.Since(began); best == 0 || took < best {
			best = took
		}
	}
	return best
}

// TestWorklistCostOfRulelessPartitions: the work list reads the head of a
// partition of a queue with no deleting rule once, not every cycle, so a
// cycle over many such partitions costs less than a buffer a partition
// (reading every head costs one primary-key descent per segment leaf).
func TestWorklistCostOfRulelessPartitions(t *testing.T) {
	e := setup(t)
	n := widePartitions(t)
	e.fillWide("wide", n)
	e.cycle() // the leaves a running server keeps ahead
	var leaves int
	if err := e.pool.QueryRow(e.ctx, `SELECT count(*) FROM pg_partition_tree('lethe.segments') WHERE isleaf`).Scan(&leaves); err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now()
	work, err := loadWork(e.ctx, e.pool, now, "", heads{})
	if err != nil || len(work) != 1 || work[0].HeadsRead != n || len(work[0].heads.Partitions) != n {
		t.Fatalf("first work list: %v; want every one of %d heads read and remembered", err, n)
	}
	known := rememberHeads(work, heads{ReadAt: now})
	all := e.explainWorklist(now, "", nil, nil, nil)
	remembered := e.explainWorklist(now, "", known.Partitions, known.Watermarks, known.FirstAt)
	t.Logf("%d partitions, %d segment leaves: every head read %d buffers (%.1f a partition), executed in %v, "+
		"round trip %v; heads remembered %d buffers (%.2f a partition), executed in %v, round trip %v", n, leaves,
		all.Buffers, float64(all.Buffers)/float64(n), all.Elapsed, e.timeWorklist(heads{}),
		remembered.Buffers, float64(remembered.Buffers)/float64(n), remembered.Elapsed, e.timeWorklist(known))
	if all.Buffers < int64(n*leaves) {
		t.Errorf("reading every head cost %d buffers, under one a partition and leaf: the measure is wrong", all.Buffers)
	}
	if remembered.Buffers*4 > int64(n) {
		t.Errorf("with the heads remembered the work list cost %d buffers for %d partitions; want under a quarter of one each",
			remembered.Buffers, n)
	}
}
