package store_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/internal/store"
)

// Offsets are assigned in append order, from 0, per partition.
func TestAppendAssignsOffsetsInOrder(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a, b := e.partition("q", "a"), e.partition("q", "b")
	first := e.appendAt(e.pool, a, t0, "a0", "a1", "a2")
	second := e.appendAt(e.pool, a, t0, "a3")
	other := e.appendAt(e.pool, b, t0, "b0")
	for i, r := range append(first, second...) {
		if r.Offset != int64(i) || r.Duplicate {
			t.Errorf("frame %d of partition a = %+v, want offset %d, not a duplicate", i, r, i)
		}
	}
	if other[0].Offset != 0 {
		t.Errorf("first frame of partition b at offset %d, want 0: offsets are per partition", other[0].Offset)
	}
	if got := strings.Join(e.read(a, 0, 10, store.Everything()), " "); got != "0:a0 1:a1 2:a2 3:a3" {
		t.Errorf("partition a reads %s", got)
	}
	h, err := store.ReadHead(e.ctx, e.pool, a)
	if err != nil || h.Empty || h.First != 0 || h.Next != 4 {
		t.Errorf("head of a = %+v, %v; want first 0, next 4", h, err)
	}
}

// A transaction id is stored once per partition: a repeat, within a batch or
// in a later one, answers the first offset; another partition stores it
// anew.
func TestAppendDeduplicates(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a, b := e.partition("q", "a"), e.partition("q", "b")
	e.appendAt(e.pool, a, t0, "x", "y")
	got := e.appendAt(e.pool, a, t0, "z", "x", "z", "w")
	want := []store.Appended{{Offset: 2}, {Offset: 0, Duplicate: true}, {Offset: 2, Duplicate: true}, {Offset: 3}}
	if !slices.Equal(got, want) {
		t.Errorf("batch with repeats answered %+v, want %+v", got, want)
	}
	all := e.appendAt(e.pool, a, t0, "y", "w")
	if !all[0].Duplicate || all[0].Offset != 1 || !all[1].Duplicate || all[1].Offset != 3 {
		t.Errorf("batch of repeats only answered %+v", all)
	}
	if r := e.appendAt(e.pool, b, t0, "x"); r[0].Duplicate || r[0].Offset != 0 {
		t.Errorf("x in another partition = %+v, want stored at 0", r[0])
	}
	if got := strings.Join(e.read(a, 0, 10, store.Everything()), " "); got != "0:x 1:y 2:z 3:w" {
		t.Errorf("partition a reads %s: duplicates must not be stored", got)
	}
	for txn, off := range map[string]int64{"x": 0, "y": 1, "z": 2, "w": 3} {
		got, found, err := store.TxnOffset(e.ctx, e.pool, a, store.TxnHash(txn))
		if err != nil || !found || got != off {
			t.Errorf("TxnOffset(%s) = %d, %v, %v; want %d", txn, got, found, err, off)
		}
	}
	if _, found, err := store.TxnOffset(e.ctx, e.pool, a, store.TxnHash("never")); found || err != nil {
		t.Errorf("TxnOffset of an unknown id: found %v, err %v", found, err)
	}
}

// Concurrent appends to one partition never share or skip an offset, and
// each appender's frames keep its order.
func TestAppendConcurrent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.partition("q", "hot")
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				b := store.NewBatch(1, 0)
				txn := fmt.Sprintf("w%d-%03d", w, i)
				b.Add(store.TxnHash(txn), encode(txn, t0), t0)
				if _, err := store.Append(e.ctx, e.pool, pid, b, t0); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent append: %v", err)
	}
	frames, err := store.Read(e.ctx, e.pool, pid, 0, writers*each+10, store.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != writers*each {
		t.Fatalf("read %d frames, want %d", len(frames), writers*each)
	}
	last := map[string]string{}
	for i, f := range frames {
		if f.Offset != int64(i) {
			t.Fatalf("frame %d at offset %d: offsets of concurrent appends must be dense and unique", i, f.Offset)
		}
		w, seq, _ := strings.Cut(f.TxnID, "-")
		if seq <= last[w] {
			t.Errorf("writer %s: %s read after %s", w, seq, last[w])
		}
		last[w] = seq
	}
}

func TestAppendToDeletedPartition(t *testing.T) {
	t.Parallel()
	e := setup(t)
	b := store.NewBatch(1, 0)
	b.Add(store.TxnHash("t"), encode("t", t0), t0)
	if _, err := store.Append(e.ctx, e.pool, uuid.New(), b, t0); !errors.Is(err, store.ErrPartitionGone) {
		t.Errorf("append to a partition that does not exist: %v, want ErrPartitionGone", err)
	}
}

// The batch's time range is stored with the segment: first_at and last_at
// are the earliest and latest frame times, whatever their order.
func TestAppendRecordsTimeRange(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.partition("q", "p")
	b := store.NewBatch(3, 0)
	for i, d := range []time.Duration{2, 0, 1} {
		at := t0.Add(d * time.Second)
		txn := fmt.Sprint(i)
		b.Add(store.TxnHash(txn), encode(txn, at), at)
	}
	if _, err := store.Append(e.ctx, e.pool, pid, b, t0); err != nil {
		t.Fatal(err)
	}
	var first, last time.Time
	if err := e.pool.QueryRow(e.ctx, `SELECT first_at, last_at FROM lethe.segments WHERE partition_id = $1`, pid).
		Scan(&first, &last); err != nil {
		t.Fatal(err)
	}
	if !first.Equal(t0) || !last.Equal(t0.Add(2*time.Second)) {
		t.Errorf("segment spans %s..%s, want %s..%s", first, last, t0, t0.Add(2*time.Second))
	}
}

// A minted transaction id (AddMinted) is not looked up: it is stored even
// where its hash is already in the sidecar (which only a 64-bit collision
// could cause; here it is forced), while the same hash added as a
// producer's id is answered as the duplicate it is. Its hash is still
// stored, so the message is found by it, and a minted id still repeats
// itself within one batch.
func TestAppendMintedIDsAreNotLookedUp(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.partition("q", "a")
	e.appendAt(e.pool, a, t0, "x")

	b := store.NewBatch(3, 0)
	b.AddMinted(store.TxnHash("x"), encode("x", t0), t0)
	b.Add(store.TxnHash("x"), encode("x", t0), t0)
	b.AddMinted(store.TxnHash("m"), encode("m", t0), t0)
	got, err := store.Append(e.ctx, e.pool, a, b, t0)
	if err != nil {
		t.Fatal(err)
	}
	// The minted "x" is new (offset 1); the producer's "x" repeats the
	// first one of this batch, as a repeat within a batch does.
	want := []store.Appended{{Offset: 1}, {Offset: 1, Duplicate: true}, {Offset: 2}}
	if !slices.Equal(got, want) {
		t.Errorf("minted and producer ids answered %+v, want %+v", got, want)
	}
	if r := e.appendAt(e.pool, a, t0, "m"); !r[0].Duplicate || r[0].Offset != 2 {
		t.Errorf("a producer's id equal to a minted one stored before = %+v, want a duplicate of offset 2", r[0])
	}
	off, found, err := store.TxnOffset(e.ctx, e.pool, a, store.TxnHash("m"))
	if err != nil || !found || off != 2 {
		t.Errorf("minted id resolves to %d, %v, %v; want offset 2", off, found, err)
	}
}
