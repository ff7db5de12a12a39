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
		got, found, err := store.TxnOffset(e.ctx, e.pool, a, txn)
		if err != nil || !found || got != off {
			t.Errorf("TxnOffset(%s) = %d, %v, %v; want %d", txn, got, found, err, off)
		}
	}
	if _, found, err := store.TxnOffset(e.ctx, e.pool, a, "never"); found || err != nil {
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
	frames, err := store.Read(e.ctx, e.pool, pid, 0, writers*each+10, 0, store.Everything())
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

// A frame without a producer's id (AddMinted) gets no sidecar entry: the
// row holds the others' hashes at their frames' positions, so a repeat of
// one of them answers its own offset, also when the repeat's batch had a
// duplicate cut out of it; a segment of minted frames only has no row.
// Every frame reads back named: the producer's id, or MintedID's.
func TestAppendMintedFramesHaveNoSidecarEntry(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.partition("q", "a")
	got, err := store.Append(e.ctx, e.pool, a, batchOf("m:", "x", "m:", "x"), t0)
	want := []store.Appended{{Offset: 0}, {Offset: 1}, {Offset: 2}, {Offset: 1, Duplicate: true}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("minted and producer ids answered %+v, %v; want %+v", got, err, want)
	}
	// x is stored at 1: a duplicate is cut from this batch, so y and z
	// land one place before where they were sent.
	got, err = store.Append(e.ctx, e.pool, a, batchOf("m:", "y", "x", "m:", "z"), t0)
	want = []store.Appended{{Offset: 3}, {Offset: 4}, {Offset: 1, Duplicate: true}, {Offset: 5}, {Offset: 6}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("a batch with a duplicate answered %+v, %v; want %+v", got, err, want)
	}
	if _, err := store.Append(e.ctx, e.pool, a, batchOf("m:", "m:"), t0); err != nil {
		t.Fatal(err)
	}
	var rows, hashes int
	if err := e.pool.QueryRow(e.ctx, `SELECT count(*), sum(cardinality(hashes)) FROM lethe.txns WHERE partition_id = $1`, a).
		Scan(&rows, &hashes); err != nil || rows != 2 || hashes != 3 {
		t.Errorf("sidecar holds %d rows of %d hashes (%v), want 2 rows of x, y and z", rows, hashes, err)
	}
	for txn, off := range map[string]int64{"x": 1, "y": 4, "z": 6} {
		if r := e.appendAt(e.pool, a, t0, txn); !r[0].Duplicate || r[0].Offset != off {
			t.Errorf("%s again = %+v, want a duplicate of offset %d", txn, r[0], off)
		}
		if got, found, err := store.TxnOffset(e.ctx, e.pool, a, txn); err != nil || !found || got != off {
			t.Errorf("TxnOffset(%s) = %d, %v, %v; want %d", txn, got, found, err, off)
		}
	}
	reads := "0:m 1:x 2:m 3:m 4:y 5:m 6:z 7:m 8:m"
	if r := strings.Join(e.readNamed(a, 0, 20), " "); r != reads {
		t.Errorf("partition reads %s, want %s", r, reads)
	}
	for off := range int64(10) {
		got, found, err := store.TxnOffset(e.ctx, e.pool, a, store.MintedID(a, off))
		if err != nil || found != (off < 9) || found && got != off {
			t.Errorf("TxnOffset(MintedID(%d)) = %d, %v, %v; want found %v", off, got, found, err, off < 9)
		}
	}
	b := e.partition("q", "b")
	if _, found, err := store.TxnOffset(e.ctx, e.pool, b, store.MintedID(a, 0)); found || err != nil {
		t.Errorf("a's minted id resolves in partition b: found %v, %v", found, err)
	}
}

// A segment of minted frames only is appended by one statement, not the
// PL/pgSQL function; where that statement cannot write (the leaf for the
// push's time is not made yet, the partition is gone) the function takes
// over in the same transaction: the leaf is made, the offsets run on, the
// append time never goes back, and a gone partition is told as such.
func TestAppendMintedSegmentWithoutTheFunction(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.partition("q", "a")
	later := t0.AddDate(2, 0, 0) // no leaf is made that far ahead
	// The first append at t0 finds no leaf for it either: the function
	// makes it.
	first, err := store.Append(e.ctx, e.pool, a, batchOf("m:", "m:"), t0)
	if want := []store.Appended{{Offset: 0}, {Offset: 1}}; err != nil || !slices.Equal(first, want) {
		t.Fatalf("first append answered %+v, %v; want %+v", first, err, want)
	}
	// With the function gone (in a transaction rolled back after), a
	// minted segment whose leaf exists is still written.
	probe, err := e.pool.Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := probe.Exec(e.ctx, `ALTER FUNCTION lethe.append_segment(uuid, bigint[], int[], int[], bytea, timestamptz, timestamptz, timestamptz) RENAME TO append_segment_away`); err != nil {
		t.Fatal(err)
	}
	if got, err := store.Append(e.ctx, probe, a, batchOf("m:"), t0); err != nil || got[0].Offset != 2 {
		t.Errorf("a minted append without lethe.append_segment answered %+v, %v; want offset 2 in one statement", got, err)
	}
	if err := probe.Rollback(e.ctx); err != nil {
		t.Fatal(err)
	}

	tx, err := e.pool.Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(e.ctx)
	for i, now := range []time.Time{later, t0} {
		got, err := store.Append(e.ctx, tx, a, batchOf("m:", "m:"), now)
		want := []store.Appended{{Offset: int64(2*i + 2)}, {Offset: int64(2*i + 3)}}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("append at %s answered %+v, %v; want %+v", now, got, err, want)
		}
	}
	if err := tx.Commit(e.ctx); err != nil {
		t.Fatal(err)
	}
	if r := strings.Join(e.readNamed(a, 0, 10), " "); r != "0:m 1:m 2:m 3:m 4:m 5:m" {
		t.Errorf("partition reads %s", r)
	}
	var appended []time.Time
	rows, err := e.pool.Query(e.ctx, `SELECT appended_at FROM lethe.segments WHERE partition_id = $1 ORDER BY base_offset`, a)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var at time.Time
		if err := rows.Scan(&at); err != nil {
			t.Fatal(err)
		}
		appended = append(appended, at)
	}
	if rows.Err() != nil || len(appended) != 3 || !appended[0].Equal(t0) || !appended[1].Equal(later) || !appended[2].Equal(later) {
		t.Errorf("segments appended at %v (%v), want %s, then %s twice: the time never goes back", appended, rows.Err(), t0, later)
	}
	if _, err := store.Append(e.ctx, e.pool, uuid.New(), batchOf("m:"), t0); !errors.Is(err, store.ErrPartitionGone) {
		t.Errorf("a minted append to a partition that does not exist: %v, want ErrPartitionGone", err)
	}
}
