package lease_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/internal/lease"
)

// outcome of one leased offset in a table row.
type outcome struct {
	offset int64
	o      lease.Outcome
}

// Settling a complete lease: every rule of the Ack section.
func TestSettle(t *testing.T) {
	t.Parallel()
	five := int64(5)
	cases := []struct {
		name          string
		cursor        *lease.Cursor
		policy        lease.Policy
		acks          []outcome
		wantCommitted int64
		wantAhead     []int64
		wantRetry     *int64
		wantCount     int
		wantAfter     *time.Time
		wantDead      *lease.DeadLetter
	}{
		{name: "all completed: past the lease", cursor: leased(-1, 0, 1, 2), policy: pol,
			acks: []outcome{{0, lease.Completed}, {1, lease.Completed}, {2, lease.Completed}}, wantCommitted: 2},
		{name: "gaps inside the lease", cursor: leased(3, 7, 20), policy: pol,
			acks: []outcome{{20, lease.Completed}, {7, lease.Completed}}, wantCommitted: 20},
		{name: "a failure: back to just before it, retried after retryDelay", cursor: leased(-1, 0, 1, 2), policy: pol,
			acks: []outcome{{0, lease.Completed}, {1, lease.Failed}, {2, lease.Failed}}, wantCommitted: 0,
			wantRetry: ptr(int64(1)), wantCount: 1, wantAfter: ptr(t0.Add(pol.RetryDelay))},
		{name: "completed after a failed one are done ahead (not redelivered)", cursor: leased(-1, 0, 1, 2, 3), policy: pol,
			acks:          []outcome{{0, lease.Failed}, {1, lease.Completed}, {2, lease.Failed}, {3, lease.Completed}},
			wantCommitted: -1, wantAhead: []int64{1, 3}, wantRetry: ptr(int64(0)), wantCount: 1, wantAfter: ptr(t0.Add(pol.RetryDelay))},
		{name: "no retryDelay: at once", cursor: leased(-1, 0), policy: lease.Policy{RetryLimit: 3},
			acks: []outcome{{0, lease.Failed}}, wantCommitted: -1, wantRetry: ptr(int64(0)), wantCount: 1},
		{name: "the same message failing again counts up", cursor: withRetry(leased(4, 5, 6), 5, 1), policy: pol,
			acks: []outcome{{5, lease.Failed}, {6, lease.Completed}}, wantCommitted: 4, wantAhead: []int64{6},
			wantRetry: &five, wantCount: 2, wantAfter: ptr(t0.Add(pol.RetryDelay))},
		{name: "past retryLimit: dead-lettered, the group moves past it", cursor: withRetry(leased(4, 5, 6), 5, 2), policy: pol,
			acks: []outcome{{5, lease.Failed}, {6, lease.Completed}}, wantCommitted: 6,
			wantDead: &lease.DeadLetter{Offset: 5, Reason: "reason 5", Retries: 3}},
		{name: "retryLimit 0: the first failure dead-letters", cursor: leased(-1, 0, 1), policy: lease.Policy{RetryLimit: 0},
			// Only the first failure counts: 1 comes again with a fresh count.
			acks: []outcome{{0, lease.Failed}, {1, lease.Failed}}, wantCommitted: 0,
			wantDead: &lease.DeadLetter{Offset: 0, Reason: "reason 0", Retries: 1}},
		{name: "dlq counts as done", cursor: leased(-1, 0, 1), policy: pol,
			acks: []outcome{{0, lease.DLQ}, {1, lease.Completed}}, wantCommitted: 1},
		{name: "a success clears an earlier retry", cursor: withRetry(leased(4, 5), 5, 2), policy: pol,
			acks: []outcome{{5, lease.Completed}}, wantCommitted: 5},
		{name: "the last outcome of a message wins", cursor: leased(-1, 0, 1), policy: pol,
			acks: []outcome{{0, lease.Failed}, {0, lease.Completed}, {1, lease.Completed}}, wantCommitted: 1},
		{name: "done-ahead offsets join the cursor once it reaches them", cursor: withAhead(leased(-1, 0), 1, 2), policy: pol,
			acks: []outcome{{0, lease.Completed}}, wantCommitted: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cursor
			for i, a := range tc.acks {
				if c.Lease.Complete() {
					t.Fatalf("lease complete after %d of %d acks", i, len(tc.acks))
				}
				ack(t, c, a.offset, a.o)
			}
			if !c.Lease.Complete() {
				t.Fatal("lease not complete after every message had an outcome")
			}
			dead := lease.Settle(c, tc.policy, t0)
			if c.Lease.Held() {
				t.Error("the lease survived settling")
			}
			if c.Committed != tc.wantCommitted || !slices.Equal(c.AckedAhead, tc.wantAhead) {
				t.Errorf("committed %d ahead %v, want %d %v", c.Committed, c.AckedAhead, tc.wantCommitted, tc.wantAhead)
			}
			if !eqPtr(c.RetryOffset, tc.wantRetry) || c.RetryCount != tc.wantCount || !eqTime(c.RetryAfter, tc.wantAfter) {
				t.Errorf("retry %v count %d after %v, want %v %d %v", deref(c.RetryOffset), c.RetryCount, c.RetryAfter,
					deref(tc.wantRetry), tc.wantCount, tc.wantAfter)
			}
			if (dead == nil) != (tc.wantDead == nil) || dead != nil && *dead != *tc.wantDead {
				t.Errorf("dead letter %+v, want %+v", dead, tc.wantDead)
			}
		})
	}
}

func TestAckOutsideTheLease(t *testing.T) {
	t.Parallel()
	c := leased(-1, 0, 1)
	if _, _, ok := lease.Ack(c, id2, 1000, lease.Completed, ""); ok {
		t.Error("an ack naming another lease applied")
	}
	if !lease.LeaseGone(c, id2) || lease.LeaseGone(c, id1) || lease.LeaseGone(c, uuid.Nil) {
		t.Error("LeaseGone: want true only for a lease id that is not the live one")
	}
	if _, _, ok := lease.Ack(c, id1, 999, lease.Completed, ""); ok {
		t.Error("an ack of a message not in the lease applied")
	}
	if off, _, ok := lease.Ack(c, id1, 1001, lease.Completed, ""); !ok || off != 1 {
		t.Errorf("ack naming the live lease: offset %d ok %v", off, ok)
	}
	idle := &lease.Cursor{Committed: 3, AckedAhead: []int64{6}}
	if _, _, ok := lease.Ack(idle, uuid.Nil, 1000, lease.Completed, ""); ok {
		t.Error("an ack applied to a cursor holding no lease")
	}
	for off, want := range map[int64]bool{2: true, 3: true, 4: false, 6: true, 7: false} {
		if idle.IsDone(off) != want {
			t.Errorf("IsDone(%d) = %v, want %v", off, !want, want)
		}
	}
}

func TestAckDLQ(t *testing.T) {
	t.Parallel()
	c := withRetry(leased(-1, 0, 1), 0, 2)
	dead := ack(t, c, 0, lease.DLQ)
	if dead == nil || *dead != (lease.DeadLetter{Offset: 0, Reason: "reason 0", Retries: 2}) {
		t.Errorf("dlq dead letter %+v, want offset 0 with its reason and 2 retries", dead)
	}
	if dead := ack(t, c, 1, lease.DLQ); dead.Retries != 0 {
		t.Errorf("dlq of a message that never failed: retries %d", dead.Retries)
	}
}

// An expired lease: what was not acked failed when the lease ended, so its
// retry delay counts from the expiry, not from when a pop notices it.
func TestExpire(t *testing.T) {
	t.Parallel()
	c := leased(-1, 0, 1, 2)
	ack(t, c, 0, lease.Completed)
	if expired, _ := lease.Expire(c, pol, t0.Add(29*time.Second)); expired {
		t.Fatal("a live lease expired")
	}
	expired, dead := lease.Expire(c, pol, t0.Add(time.Hour))
	if !expired || dead != nil {
		t.Fatalf("expire = %v, %+v", expired, dead)
	}
	if c.Committed != 0 || deref(c.RetryOffset) != 1 || c.RetryCount != 1 || !c.RetryAfter.Equal(t0.Add(30*time.Second+pol.RetryDelay)) {
		t.Errorf("after expiry: committed %d retry %d/%d after %v", c.Committed, deref(c.RetryOffset), c.RetryCount, c.RetryAfter)
	}
	if !lease.Ready(c, pol, nil, t0.Add(time.Hour)) {
		t.Error("an hour after the expiry the message waits still")
	}
	// Expiring past retryLimit dead-letters with the expiry as reason,
	// unless an earlier message of the lease failed with its own.
	c = withRetry(leased(-1, 0, 1), 0, 2)
	ack(t, c, 1, lease.Failed)
	if _, dead := lease.Expire(c, pol, t0.Add(time.Hour)); dead == nil || dead.Reason != "lease expired" || dead.Retries != 3 || c.Committed != 0 {
		t.Errorf("expiry past the limit: dead %+v committed %d", dead, c.Committed)
	}
	c = withRetry(leased(-1, 0, 1), 0, 2)
	ack(t, c, 0, lease.Failed)
	if _, dead := lease.Expire(c, pol, t0.Add(time.Hour)); dead == nil || dead.Reason != "reason 0" {
		t.Errorf("expiry after the first message failed: dead %+v, want its own reason", dead)
	}
}

func withRetry(c *lease.Cursor, offset int64, count int) *lease.Cursor {
	c.RetryOffset, c.RetryCount = &offset, count
	return c
}

func withAhead(c *lease.Cursor, offsets ...int64) *lease.Cursor {
	c.AckedAhead = offsets
	return c
}

func ptr[T any](v T) *T { return &v }

func deref(p *int64) int64 {
	if p == nil {
		return -99
	}
	return *p
}

func eqPtr(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func eqTime(a, b *time.Time) bool { return a == nil && b == nil || a != nil && b != nil && a.Equal(*b) }
