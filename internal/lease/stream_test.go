package lease_test

import (
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/internal/lease"
)

// leasedCursor is a cursor at committed holding lease id1 over offsets (hash
// offset+1000).
func leasedCursor(committed int64, offsets ...int64) lease.Cursor {
	c := lease.Cursor{Committed: committed, Lease: lease.Lease{ID: id1, Until: t0}}
	for _, o := range offsets {
		c.Lease.Offsets = append(c.Lease.Offsets, o)
		c.Lease.Hashes = append(c.Lease.Hashes, o+1000)
	}
	return c
}

func TestLeasedFindsOnlyTheLiveLeasesMessages(t *testing.T) {
	t.Parallel()
	c := leasedCursor(4, 5, 6, 7)
	for _, tc := range []struct {
		name   string
		id     uuid.UUID
		hash   int64
		offset int64
		ok     bool
	}{
		{"any lease", uuid.Nil, 1006, 6, true},
		{"this lease", id1, 1007, 7, true},
		{"another lease", id2, 1006, 0, false},
		{"not leased", uuid.Nil, 1008, 0, false},
	} {
		off, ok := lease.Leased(&c, tc.id, tc.hash)
		if off != tc.offset || ok != tc.ok {
			t.Errorf("%s: %d %v, want %d %v", tc.name, off, ok, tc.offset, tc.ok)
		}
	}
	none := lease.Cursor{Committed: 4}
	if _, ok := lease.Leased(&none, uuid.Nil, 1005); ok {
		t.Error("a cursor without a lease found a leased message")
	}
}

func TestCommitThroughMovesTheCursorAndReleasesOrTrims(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		through   int64
		release   bool
		acked     int
		committed int64
		kept      []int64
	}{
		{"whole lease, released", 7, true, 3, 7, nil},
		{"a prefix, released", 5, true, 1, 5, nil},
		{"a prefix, kept", 5, false, 1, 5, []int64{6, 7}},
		{"whole lease, kept", 7, false, 3, 7, nil},
	} {
		c := leasedCursor(4, 5, 6, 7)
		c.Lease.Done = []int64{7}
		acked := lease.CommitThrough(&c, tc.through, tc.release)
		if acked != tc.acked || c.Committed != tc.committed || !slices.Equal(c.Lease.Offsets, tc.kept) {
			t.Errorf("%s: acked %d, committed %d, lease %v; want %d, %d, %v",
				tc.name, acked, c.Committed, c.Lease.Offsets, tc.acked, tc.committed, tc.kept)
		}
		if tc.kept != nil && (c.Lease.ID != id1 || !slices.Equal(c.Lease.Hashes, []int64{1006, 1007}) || !slices.Equal(c.Lease.Done, []int64{7})) {
			t.Errorf("%s: the kept lease is %+v, want id1 with the tail's hashes and outcomes", tc.name, c.Lease)
		}
		if tc.kept == nil && c.Lease.Held() {
			t.Errorf("%s: a lease is still held", tc.name)
		}
	}
}
