package store_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

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

// A group with no producer's id is written by one statement, not
// lethe.append_segments: with the function renamed away (in a transaction
// rolled back after) it still lands. A leaf not made yet, or a gone
// partition, sends it to the function, which makes the leaf or refuses
// the group as before.
func TestAppendGroupMintedWithoutTheFunction(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pids := e.sortedPartitions(3)
	e.appendAt(e.pool, pids[1], t0, "old") // makes t0's leaf
	minted := func() []*store.Batch {
		return []*store.Batch{batchOf("m:", "m:"), batchOf("m:"), batchOf("m:", "m:", "m:")}
	}
	probe, err := e.pool.Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := probe.Exec(e.ctx, `ALTER FUNCTION lethe.append_segments(uuid[], int[], int[], bigint[], int[], bytea[], timestamptz[], timestamptz[], timestamptz) RENAME TO append_segments_away`); err != nil {
		t.Fatal(err)
	}
	got, ok, err := store.AppendGroup(e.ctx, probe, pids, minted(), t0)
	want := [][]store.Appended{{{Offset: 0}, {Offset: 1}}, {{Offset: 1}}, {{Offset: 0}, {Offset: 1}, {Offset: 2}}}
	if err != nil || !ok || !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("a minted group without lethe.append_segments answered %+v, ok %v, %v; want %+v in one statement", got, ok, err, want)
	}
	if err := probe.Rollback(e.ctx); err != nil {
		t.Fatal(err)
	}

	later := t0.AddDate(2, 0, 0) // no leaf is made that far ahead
	for i, now := range []time.Time{t0, later, t0} {
		got, ok, err := store.AppendGroup(e.ctx, e.pool, pids, minted(), now)
		n := int64(i)
		want := [][]store.Appended{{{Offset: 2 * n}, {Offset: 2*n + 1}}, {{Offset: n + 1}}, {{Offset: 3 * n}, {Offset: 3*n + 1}, {Offset: 3*n + 2}}}
		if err != nil || !ok || !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("group %d at %s answered %+v, ok %v, %v; want %+v", i, now, got, ok, err, want)
		}
	}
	for i, want := range []string{"0:m 1:m 2:m 3:m 4:m 5:m", "0:old 1:m 2:m 3:m", "0:m 1:m 2:m 3:m 4:m 5:m 6:m 7:m 8:m"} {
		if r := strings.Join(e.readNamed(pids[i], 0, 20), " "); r != want {
			t.Errorf("partition %d reads %s, want %s", i, r, want)
		}
	}
	var last time.Time
	if err := e.pool.QueryRow(e.ctx, `SELECT max(appended_at) FROM lethe.segments WHERE partition_id = $1 AND base_offset = 3`, pids[1]).Scan(&last); err != nil || !last.Equal(later) {
		t.Errorf("the group after the later one was appended at %s (%v), want %s: the time never goes back", last, err, later)
	}
	gone := slices.Clone(pids)
	gone[0] = uuid.UUID{} // sorts first
	if _, ok, err := store.AppendGroup(e.ctx, e.pool, gone, minted(), t0); ok || err != nil {
		t.Errorf("a minted group with a gone partition: ok %v, %v; want not ok and no error", ok, err)
	}
	if r := strings.Join(e.readNamed(pids[2], 0, 20), " "); strings.Count(r, ":m") != 9 {
		t.Errorf("the refused group wrote to a partition: it reads %s", r)
	}
}
