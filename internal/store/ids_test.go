package store_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/internal/store"
)

// A minted id is a canonical UUIDv8 that reads back as its offset in its
// own partition only; no other spelling of it, no producer's UUID and no
// other partition's id decodes.
func TestMintedIDNamesItsPartitionAndOffset(t *testing.T) {
	t.Parallel()
	pid, other := uuid.New(), uuid.New()
	for _, off := range []int64{0, 1, 255, 1 << 40, 1<<62 - 1} {
		id := store.MintedID(pid, off)
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 8 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("MintedID(%d) = %s: version %d, variant %v, %v; want a version 8 UUID", off, id, u.Version(), u.Variant(), err)
		}
		if got, ok := store.MintedOffset(pid, id); !ok || got != off {
			t.Errorf("MintedOffset(MintedID(%d)) = %d, %v", off, got, ok)
		}
		if _, ok := store.MintedOffset(other, id); ok {
			t.Errorf("%s decodes in another partition", id)
		}
		for _, spelling := range []string{strings.ToUpper(id), "urn:uuid:" + id, strings.ReplaceAll(id, "-", "")} {
			if _, ok := store.MintedOffset(pid, spelling); ok {
				t.Errorf("%q, another spelling of %s, decodes", spelling, id)
			}
		}
	}
	if store.MintedID(pid, 1) == store.MintedID(pid, 2) || store.MintedID(pid, 1) == store.MintedID(other, 1) {
		t.Error("two messages got one id")
	}
	for _, id := range []string{uuid.NewString(), "not-an-id", ""} {
		if _, ok := store.MintedOffset(pid, id); ok {
			t.Errorf("%q decodes as minted", id)
		}
	}
	// Only the partition's first 64 bits but the version nibble count.
	near := pid
	near[15] ^= 0xff
	if _, ok := store.MintedOffset(near, store.MintedID(pid, 7)); !ok {
		t.Error("the partition's last bytes changed the id")
	}
	near = pid
	near[7] ^= 1
	if _, ok := store.MintedOffset(near, store.MintedID(pid, 7)); ok {
		t.Error("a partition differing in its 64th bit decodes the id")
	}
}
