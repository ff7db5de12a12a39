package store_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/internal/store"
)

// batchOf is a batch of one frame per transaction id, created at t0; ids
// starting with "m:" are frames without an id (AddMinted).
func batchOf(txns ...string) *store.Batch {
	b := store.NewBatch(len(txns), 0)
	for _, txn := range txns {
		if strings.HasPrefix(txn, "m:") {
			b.AddMinted(encode("", t0), t0)
		} else {
			b.Add(store.TxnHash(txn), encode(txn, t0), t0)
		}
	}
	return b
}

// sortedPartitions creates n partitions of queue q and returns their ids
// in lock order.
func (e *env) sortedPartitions(n int) []uuid.UUID {
	pids := make([]uuid.UUID, n)
	for i := range pids {
		pids[i] = e.partition("q", string(rune('a'+i)))
	}
	slices.SortFunc(pids, func(x, y uuid.UUID) int { return bytes.Compare(x[:], y[:]) })
	return pids
}

// A group's segments land each at the end of its partition, in one call:
// offsets follow what each partition held, every frame reads back, and
// each partition's sidecar row holds exactly its own hashes, and a minted
// id resolves in its own partition only.
func TestAppendGroupWritesEachPartition(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pids := e.sortedPartitions(3)
	e.appendAt(e.pool, pids[1], t0, "old")
	got, ok, err := store.AppendGroup(e.ctx, e.pool, pids,
		[]*store.Batch{batchOf("a1", "a2", "m:a3"), batchOf("b1"), batchOf("m:c1", "c2", "c2", "c3")}, t0)
	if err != nil || !ok {
		t.Fatalf("append group: ok %v, %v", ok, err)
	}
	want := [][]store.Appended{
		{{Offset: 0}, {Offset: 1}, {Offset: 2}},
		{{Offset: 1}},
		{{Offset: 0}, {Offset: 1}, {Offset: 1, Duplicate: true}, {Offset: 2}},
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("partition %d answered %+v, want %+v", i, got[i], want[i])
		}
	}
	reads := []string{"0:a1 1:a2 2:m", "0:old 1:b1", "0:m 1:c2 2:c3"}
	for i, pid := range pids {
		if r := strings.Join(e.readNamed(pid, 0, 10), " "); r != reads[i] {
			t.Errorf("partition %d reads %s, want %s", i, r, reads[i])
		}
	}
	for i, txns := range [][]string{{"a1", "a2", "m:a3"}, {"old", "b1"}, {"m:c1", "c2", "c3"}} {
		for off, txn := range txns {
			for j, pid := range pids {
				if strings.HasPrefix(txn, "m:") {
					txn = store.MintedID(pids[i], int64(off))
				}
				at, found, err := store.TxnOffset(e.ctx, e.pool, pid, txn)
				if err != nil || found != (i == j) || (found && at != int64(off)) {
					t.Errorf("%s in partition %d: offset %d, found %v, %v; want found %v at %d", txn, j, at, found, err, i == j, off)
				}
			}
		}
	}
	h, err := store.ReadHead(e.ctx, e.pool, pids[2])
	if err != nil || h.Next != 3 {
		t.Errorf("head of the third partition = %+v, %v; want next 3", h, err)
	}
}

// The group writes nothing and answers not ok when a producer id of any of
// its segments is stored in its partition already, or a partition is gone:
// the caller then appends each segment on its own. Partitions out of lock
// order are refused.
func TestAppendGroupLeavesTheUncommonCases(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pids := e.sortedPartitions(2)
	e.appendAt(e.pool, pids[1], t0, "seen")
	cases := map[string]func() ([]uuid.UUID, []*store.Batch){
		"a repeated producer id": func() ([]uuid.UUID, []*store.Batch) {
			return pids, []*store.Batch{batchOf("x"), batchOf("y", "seen")}
		},
		"a gone partition": func() ([]uuid.UUID, []*store.Batch) {
			gone := slices.Clone(pids)
			gone[0] = uuid.UUID{} // sorts first
			return gone, []*store.Batch{batchOf("x"), batchOf("y")}
		},
	}
	for name, c := range cases {
		group, batches := c()
		if _, ok, err := store.AppendGroup(e.ctx, e.pool, group, batches, t0); ok || err != nil {
			t.Errorf("%s: ok %v, %v; want not ok and no error", name, ok, err)
		}
	}
	for i, want := range []string{"", "0:seen"} {
		if r := strings.Join(e.read(pids[i], 0, 10, store.Everything()), " "); r != want {
			t.Errorf("partition %d reads %q after the refused groups, want %q", i, r, want)
		}
	}
	if _, _, err := store.AppendGroup(e.ctx, e.pool, []uuid.UUID{pids[1], pids[0]}, []*store.Batch{batchOf("p"), batchOf("q")}, t0); err == nil {
		t.Error("partitions out of lock order were accepted")
	}
}
