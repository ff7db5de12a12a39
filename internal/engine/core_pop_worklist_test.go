package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/engine"
)

// isListing picks out the wildcard pops' candidate listing, the statement
// that reads every partition of the queue.
func isListing(sql string) bool {
	return strings.Contains(sql, "LEFT JOIN lethe.cursors c ON c.partition_id = p.id AND c.group_name = $2")
}

// pushToEach pushes one message to each of n partitions of queue.
func pushToEach(e *coreEnv, queue string, n int) {
	for i := range n {
		e.push(queue, fmt.Sprintf("p-%03d", i), `"m"`)
	}
}

// One listing serves many pops: the partitions it found with work wait in
// the replica's work list, each handed to one pop. Draining 300 partitions
// of one message each takes a few listings, not one per pop (300 before),
// and every message is delivered once.
func TestCorePopListsOnceForManyPops(t *testing.T) {
	t.Parallel()
	l := &roundTrips{only: isListing}
	e := newCoreEnvPool(t, engine.Config{}, func(c *pgxpool.Config) { c.ConnConfig.Tracer = l })
	e.configure("wide", `{}`)
	const n = 300
	pushToEach(e, "wide", n)
	before := l.n.Load()
	seen := map[string]bool{}
	for range n {
		resp := e.popN(engine.PopRequest{Queue: "wide", Group: "g"}, 1)
		if seen[resp.Partition] {
			t.Fatalf("partition %s delivered twice", resp.Partition)
		}
		seen[resp.Partition] = true
	}
	if got := l.n.Load() - before; got > 3 {
		t.Errorf("%d pops listed candidates %d times, want at most 3", n, got)
	}
	// Every message is leased: the list is spent and the next pop lists
	// from the database to answer empty.
	before = l.n.Load()
	if resp := e.pop(engine.PopRequest{Queue: "wide", Group: "g"}); len(resp.Messages) != 0 {
		t.Fatalf("pop with every message leased got %v", corePayloads(resp))
	}
	if got := l.n.Load() - before; got == 0 {
		t.Errorf("an empty answer came without a listing")
	}
}

// The work list is a hint: when what it holds was taken by consumers of
// other replicas, a pop lists from the database before answering empty.
// Here 400 listed partitions are leased behind the list's back (more than
// eight rounds of candidates could try) and a message arrives in a
// partition the list does not hold.
func TestCorePopFromStaleWorkListFindsWork(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.configure("stale", `{}`)
	pushToEach(e, "stale", 401)
	e.popN(engine.PopRequest{Queue: "stale", Group: "g"}, 1) // lists them all
	if _, err := e.pool.Exec(e.ctx, `
		INSERT INTO lethe.cursors (partition_id, group_name, committed, updated_at)
		SELECT p.id, 'g', -1, $1 FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
		 WHERE q.name = 'stale'
		ON CONFLICT DO NOTHING`, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if n, err := e.pool.Exec(e.ctx, `
		UPDATE lethe.cursors SET lease_id = gen_random_uuid(), lease_until = $1, lease_from = 0, lease_to = 0,
		       lease_offsets = '{0}', lease_hashes = '{0}'
		 WHERE group_name = 'g' AND lease_id IS NULL`, e.clock.Now().Add(time.Hour)); err != nil || n.RowsAffected() != 400 {
		t.Fatalf("lease the listed partitions: %v, %d rows", err, n.RowsAffected())
	}
	e.push("stale", "fresh", `"new"`)
	resp := e.popN(engine.PopRequest{Queue: "stale", Group: "g"}, 1)
	if resp.Partition != "fresh" {
		t.Fatalf("pop got partition %s, want fresh", resp.Partition)
	}
}
