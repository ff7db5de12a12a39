package lease_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/internal/lease"
)

var (
	t0  = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	id1 = uuid.MustParse("00000000-0000-0000-0000-000000000001")
	id2 = uuid.MustParse("00000000-0000-0000-0000-000000000002")
	pol = lease.Policy{LeaseTime: 30 * time.Second, RetryLimit: 2, RetryDelay: 5 * time.Second}
)

// offers are readable messages at the given offsets; offset o has hash o+1000.
func offers(offsets ...int64) []lease.Offer {
	out := make([]lease.Offer, len(offsets))
	for i, o := range offsets {
		out[i] = lease.Offer{Offset: o, Hash: o + 1000}
	}
	return out
}

// claimed returns the delivered offsets.
func claimed(of []lease.Offer, cl lease.Claim) []int64 {
	out := []int64{}
	for _, i := range cl.Deliver {
		out = append(out, of[i].Offset)
	}
	return out
}

// leased is a cursor at committed holding a lease of offsets, claimed at t0.
func leased(committed int64, offsets ...int64) *lease.Cursor {
	c := &lease.Cursor{Committed: committed}
	lease.ClaimOffers(c, pol, offers(offsets...), len(offsets), false, id1, t0)
	return c
}

func ack(t *testing.T, c *lease.Cursor, offset int64, o lease.Outcome) *lease.DeadLetter {
	t.Helper()
	off, dead, ok := lease.Ack(c, uuid.Nil, offset+1000, o, fmt.Sprintf("reason %d", offset))
	if !ok || off != offset {
		t.Fatalf("ack of %d: offset %d, ok %v", offset, off, ok)
	}
	return dead
}

func TestClaim(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		cursor        lease.Cursor
		offers        []lease.Offer
		batch         int
		autoAck       bool
		wantDeliver   []int64
		wantCommitted int64
		wantAhead     []int64
		wantDead      []int64
		wantMoved     bool
		wantExpired   int
	}{
		{name: "batch from the cursor on", cursor: lease.Cursor{Committed: -1}, offers: offers(0, 1, 2, 3), batch: 2,
			wantDeliver: []int64{0, 1}, wantCommitted: -1},
		{name: "gaps are fine", cursor: lease.Cursor{Committed: 4}, offers: offers(9, 20, 21), batch: 10,
			wantDeliver: []int64{9, 20, 21}, wantCommitted: 4},
		{name: "nothing stored", cursor: lease.Cursor{Committed: 4}, batch: 10, wantDeliver: []int64{}, wantCommitted: 4},
		{name: "autoAck moves the cursor", cursor: lease.Cursor{Committed: -1}, offers: offers(0, 1, 5), batch: 3, autoAck: true,
			wantDeliver: []int64{0, 1, 5}, wantCommitted: 5},
		{name: "acked ahead are skipped", cursor: lease.Cursor{Committed: 1, AckedAhead: []int64{3, 4}}, offers: offers(2, 3, 4, 5), batch: 2,
			wantDeliver: []int64{2, 5}, wantCommitted: 1, wantAhead: []int64{3, 4}},
		{name: "leading acked ahead move the cursor over gaps", cursor: lease.Cursor{Committed: 1, AckedAhead: []int64{7}}, offers: offers(7, 9), batch: 5,
			wantDeliver: []int64{9}, wantCommitted: 7, wantMoved: true},
		{name: "only acked ahead left", cursor: lease.Cursor{Committed: 1, AckedAhead: []int64{7, 8}}, offers: offers(7, 8), batch: 5,
			wantDeliver: []int64{}, wantCommitted: 8, wantMoved: true},
		{name: "unreadable leading is dead-lettered and passed", cursor: lease.Cursor{Committed: -1},
			offers: []lease.Offer{{Offset: 0, Unreadable: "damaged"}, {Offset: 1, Hash: 1001}}, batch: 5,
			wantDeliver: []int64{1}, wantCommitted: 0, wantDead: []int64{0}, wantMoved: true},
		{name: "unreadable after a delivered one is done ahead", cursor: lease.Cursor{Committed: -1},
			offers: []lease.Offer{{Offset: 0, Hash: 1000}, {Offset: 1, Unreadable: "not JSON"}, {Offset: 2, Hash: 1002}}, batch: 5,
			wantDeliver: []int64{0, 2}, wantCommitted: -1, wantAhead: []int64{1}, wantDead: []int64{1}},
		{name: "unreadable does not count toward the batch", cursor: lease.Cursor{Committed: -1},
			offers: []lease.Offer{{Offset: 0, Unreadable: "x"}, {Offset: 1, Hash: 1001}, {Offset: 2, Hash: 1002}}, batch: 1,
			wantDeliver: []int64{1}, wantCommitted: 0, wantDead: []int64{0}, wantMoved: true},
		{name: "expired leading are passed, not delivered", cursor: lease.Cursor{Committed: -1},
			offers: []lease.Offer{{Offset: 0, Expired: true}, {Offset: 1, Expired: true}, {Offset: 2, Hash: 1002}}, batch: 5,
			wantDeliver: []int64{2}, wantCommitted: 1, wantMoved: true, wantExpired: 2},
		{name: "expired after a delivered one is done ahead", cursor: lease.Cursor{Committed: -1},
			offers: []lease.Offer{{Offset: 0, Hash: 1000}, {Offset: 1, Expired: true}}, batch: 5,
			wantDeliver: []int64{0}, wantCommitted: -1, wantAhead: []int64{1}, wantExpired: 1},
		{name: "expired and unreadable is dead-lettered as unreadable", cursor: lease.Cursor{Committed: -1},
			offers: []lease.Offer{{Offset: 0, Unreadable: "damaged", Expired: true}}, batch: 5,
			wantDeliver: []int64{}, wantCommitted: 0, wantDead: []int64{0}, wantMoved: true},
		{name: "expired done ahead is not counted again", cursor: lease.Cursor{Committed: -1, AckedAhead: []int64{0}},
			offers: []lease.Offer{{Offset: 0, Expired: true}}, batch: 5,
			wantDeliver: []int64{}, wantCommitted: 0, wantMoved: true},
		{name: "offers at or below the cursor are ignored", cursor: lease.Cursor{Committed: 5}, offers: offers(4, 5, 6), batch: 5,
			wantDeliver: []int64{6}, wantCommitted: 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cursor
			cl := lease.ClaimOffers(&c, pol, tc.offers, tc.batch, tc.autoAck, id1, t0)
			if got := claimed(tc.offers, cl); !slices.Equal(got, tc.wantDeliver) {
				t.Errorf("delivered %v, want %v", got, tc.wantDeliver)
			}
			if c.Committed != tc.wantCommitted || !slices.Equal(c.AckedAhead, tc.wantAhead) {
				t.Errorf("cursor committed %d ahead %v, want %d %v", c.Committed, c.AckedAhead, tc.wantCommitted, tc.wantAhead)
			}
			var dead []int64
			for _, d := range cl.Dead {
				dead = append(dead, d.Offset)
			}
			if !slices.Equal(dead, tc.wantDead) || cl.Moved != tc.wantMoved || cl.Expired != tc.wantExpired {
				t.Errorf("dead %v moved %v expired %d, want %v %v %d", dead, cl.Moved, cl.Expired, tc.wantDead, tc.wantMoved, tc.wantExpired)
			}
			switch {
			case tc.autoAck || len(tc.wantDeliver) == 0:
				if c.Lease.Held() {
					t.Errorf("lease %+v taken, want none", c.Lease)
				}
			case !slices.Equal(c.Lease.Offsets, tc.wantDeliver) || c.Lease.ID != id1 || !c.Lease.Until.Equal(t0.Add(pol.LeaseTime)):
				t.Errorf("lease %+v, want offsets %v under %s until now+leaseTime", c.Lease, tc.wantDeliver, id1)
			}
		})
	}
}

func TestClaimHashesAndDeadLetterReason(t *testing.T) {
	t.Parallel()
	off := int64(3)
	c := lease.Cursor{Committed: 2, RetryOffset: &off, RetryCount: 2}
	cl := lease.ClaimOffers(&c, pol, []lease.Offer{{Offset: 3, Unreadable: "frame damaged"}, {Offset: 4, Hash: 77}}, 5, false, id1, t0)
	if len(cl.Dead) != 1 || cl.Dead[0] != (lease.DeadLetter{Offset: 3, Reason: "unreadable: frame damaged", Retries: 2}) {
		t.Errorf("dead letters %+v, want offset 3 with its reason and its 2 retries", cl.Dead)
	}
	if c.RetryOffset != nil || c.RetryCount != 0 {
		t.Errorf("retry state %v/%d survived moving past the retried message", c.RetryOffset, c.RetryCount)
	}
	if !slices.Equal(c.Lease.Hashes, []int64{77}) {
		t.Errorf("lease hashes %v, want [77]", c.Lease.Hashes)
	}
}

func TestBusyAndReady(t *testing.T) {
	t.Parallel()
	c := leased(-1, 0, 1)
	if !c.Busy(t0.Add(29*time.Second)) || c.Busy(t0.Add(30*time.Second)) {
		t.Errorf("a lease is live until exactly now+leaseTime")
	}
	after := t0.Add(5 * time.Second)
	w := lease.Policy{WindowBuffer: 10 * time.Second}
	push := t0
	for _, tc := range []struct {
		name  string
		c     lease.Cursor
		p     lease.Policy
		push  *time.Time
		now   time.Time
		ready bool
	}{
		{"nothing pending", lease.Cursor{}, pol, nil, t0, true},
		{"retry delay running", lease.Cursor{RetryAfter: &after}, pol, nil, t0.Add(4 * time.Second), false},
		{"retry delay over", lease.Cursor{RetryAfter: &after}, pol, nil, after, true},
		{"window open", lease.Cursor{}, w, &push, t0.Add(9 * time.Second), false},
		{"window closed", lease.Cursor{}, w, &push, t0.Add(10 * time.Second), true},
		{"no push yet", lease.Cursor{}, w, nil, t0, true},
	} {
		if got := lease.Ready(&tc.c, tc.p, tc.push, tc.now); got != tc.ready {
			t.Errorf("%s: ready %v, want %v", tc.name, got, tc.ready)
		}
	}
}

// A cursor below the low watermark moves to it, counting as lost only what
// it had not completed ahead, and forgets a retry of a deleted message.
func TestSkipDeleted(t *testing.T) {
	retry := int64(5)
	c := lease.Cursor{Committed: 3, AckedAhead: []int64{6, 12}, RetryOffset: &retry, RetryCount: 2}
	from, to, unread, ok := c.SkipDeleted(10)
	if !ok || from != 4 || to != 9 || unread != 5 {
		t.Fatalf("skip to 10 = %d..%d, %d unread, %v; want 4..9, 5 unread (6 was done ahead)", from, to, unread, ok)
	}
	if c.Committed != 9 || !slices.Equal(c.AckedAhead, []int64{12}) || c.RetryOffset != nil || c.RetryCount != 0 {
		t.Fatalf("cursor after the skip = %+v, want committed 9, 12 still ahead, no retry", c)
	}
	if _, _, _, ok := c.SkipDeleted(10); ok {
		t.Fatal("a second skip to the same watermark found a gap")
	}
	c = lease.Cursor{Committed: 3, AckedAhead: []int64{4, 5}}
	if _, _, _, ok := c.SkipDeleted(6); ok || c.Committed != 5 || len(c.AckedAhead) != 0 {
		t.Fatalf("skipping only messages done ahead: ok %v, cursor %+v; want no gap, committed 5", ok, c)
	}
}
