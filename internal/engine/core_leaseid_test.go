package engine_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/internal/engine"
)

// A lease id names its queue (UUIDv8, queue id in the first 48 bits), so
// an extend finds the cursors without an index on lease_id; a lease drawn
// before that layout (a random v4 id, live across an upgrade) can still be
// extended.
func TestCoreLeaseIDCarriesItsQueue(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.push("first", "p", `1`)
	e.push("second", "p", `2`, `3`)
	var qid int64
	if err := e.pool.QueryRow(e.ctx, `SELECT id FROM lethe.queues WHERE name = 'second'`).Scan(&qid); err != nil {
		t.Fatal(err)
	}
	resp := e.popN(engine.PopRequest{Queue: "second", Group: "g"}, 1)
	id := uuid.MustParse(resp.LeaseID)
	if id.Version() != 8 || id.Variant() != uuid.RFC4122 {
		t.Fatalf("lease id %s is version %d variant %v, want version 8 of RFC 9562", id, id.Version(), id.Variant())
	}
	var got int64
	for _, b := range id[:6] {
		got = got<<8 | int64(b)
	}
	if got != qid {
		t.Errorf("lease id %s carries queue %d, want %d", id, got, qid)
	}
	other := e.popN(engine.PopRequest{Queue: "second", Group: "h"}, 1)
	if other.LeaseID == resp.LeaseID {
		t.Fatalf("two pops drew the same lease id %s", resp.LeaseID)
	}
	if _, err := e.eng.ExtendLease(e.ctx, resp.LeaseID, 60); err != nil {
		t.Fatalf("extend: %v", err)
	}

	// A v4 lease id, as drawn before: extended by a scan of the cursors.
	legacy := uuid.New()
	if _, err := e.pool.Exec(e.ctx, `UPDATE lethe.cursors SET lease_id = $1 WHERE lease_id = $2`, legacy, id); err != nil {
		t.Fatal(err)
	}
	until, err := e.eng.ExtendLease(e.ctx, legacy.String(), 90)
	if err != nil {
		t.Fatalf("extend a v4 lease id: %v", err)
	}
	if want := e.clock.Now().Add(90e9); !until.Equal(want) {
		t.Errorf("v4 lease extended to %s, want %s", until, want)
	}
	// A v8 id naming the right queue but held by nobody is not found.
	if _, err := e.eng.ExtendLease(e.ctx, resp.LeaseID, 60); err == nil {
		t.Errorf("extending a lease id no cursor holds succeeded")
	}
}
