package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/frame"
	"github.com/lethe-mq/lethe/internal/store"
	"github.com/lethe-mq/lethe/internal/store/storetest"
)

// Whatever bytes a segment holds, a read answers: frames that decode come
// back, offsets that do not come back unreadable, and segments around the
// damaged one are untouched.
func TestReadDamagedSegments(t *testing.T) {
	t.Parallel()
	e := setup(t)
	good := append(encode("g0", t0), encode("g1", t0)...)
	cases := []struct {
		name   string
		frames []byte
		count  int
		want   string // offsets 10.. of the damaged segment
	}{
		{"truncated last frame", good[:len(good)-3], 2, "10:g0 11:!"},
		{"garbage", []byte{0xde, 0xad, 0xbe, 0xef, 0, 1}, 2, "10:! 11:!"},
		{"empty", []byte{}, 3, "10:! 11:! 12:!"},
		{"fewer frames than offsets", good, 3, "10:g0 11:g1 12:!"},
		{"more frames than offsets", good, 1, "10:g0"},
		{"bad version", append([]byte{0, 0, 0, 9, 7}, make([]byte, 8)...), 1, "10:!"},
	}
	for _, c := range cases {
		pid := e.partition("q", c.name)
		e.appendAt(e.pool, pid, t0, "before") // offset 0
		if err := storetest.Write(e.ctx, e.pool, storetest.Segment{Partition: pid, Base: 10, Count: c.count,
			Frames: c.frames, FirstAt: t0, LastAt: t0}); err != nil {
			t.Fatal(err)
		}
		e.appendAt(e.pool, pid, t0, "after")
		after := int64(10 + c.count)
		want := "0:before " + c.want + " " + itoa(after) + ":after"
		if got := strings.Join(e.read(pid, 0, 20, store.Everything()), " "); got != want {
			t.Errorf("%s: read %q, want %q", c.name, got, want)
		}
		frames, err := store.Read(e.ctx, e.pool, pid, 10, 20, 0, store.Everything())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, f := range frames {
			if f.Err != nil && (!errors.Is(f.Err, store.ErrUnreadable) || !errors.Is(f.Err, frame.ErrCorrupt)) {
				t.Errorf("%s: offset %d error %v, want ErrUnreadable wrapping frame.ErrCorrupt", c.name, f.Offset, f.Err)
			}
		}
		refs, err := store.ListSegments(e.ctx, e.pool, store.SegmentFilter{Partition: &pid}, nil, 10)
		if err != nil || len(refs) != 3 {
			t.Fatalf("%s: list segments = %v, %v", c.name, refs, err)
		}
		seg, _, found, err := store.ReadSegment(e.ctx, e.pool, refs[1])
		if err != nil || !found || strings.Join(describe(seg), " ") != c.want {
			t.Errorf("%s: ReadSegment = %q, %v, %v; want %q", c.name, describe(seg), found, err, c.want)
		}
		if off, err := store.OffsetAt(e.ctx, e.pool, pid, t0); err != nil || off != 0 {
			t.Errorf("%s: OffsetAt = %d, %v", c.name, off, err)
		}
	}
}

// A damaged frame's offset becomes visible with its segment's last write.
func TestReadDamagedRespectsVisibility(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.partition("q", "p")
	later := t0.Add(time.Minute)
	if err := storetest.Write(e.ctx, e.pool, storetest.Segment{Partition: pid, Base: 0, Count: 1,
		Frames: []byte{1, 2, 3}, FirstAt: t0, LastAt: later}); err != nil {
		t.Fatal(err)
	}
	if got := e.read(pid, 0, 5, t0); len(got) != 0 {
		t.Errorf("damaged segment written later than the cut read as %v", got)
	}
	if got := strings.Join(e.read(pid, 0, 5, later), " "); got != "0:!" {
		t.Errorf("read at its time = %q", got)
	}
}

// Browsing lists segments newest first, one partition by offset, across
// partitions by last write.
func TestListAndDeleteSegments(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a, b := e.partition("q", "a"), e.partition("q", "b")
	e.appendAt(e.pool, a, t0, "a0")
	e.appendAt(e.pool, b, t0.Add(time.Second), "b0")
	e.appendAt(e.pool, a, t0.Add(2*time.Second), "a1")
	refs, err := store.ListSegments(e.ctx, e.pool, store.SegmentFilter{}, nil, 2)
	if err != nil || len(refs) != 2 || refs[0].Partition != a || refs[0].Base != 1 || refs[1].Partition != b {
		t.Fatalf("first page = %+v, %v", refs, err)
	}
	rest, err := store.ListSegments(e.ctx, e.pool, store.SegmentFilter{}, &refs[1], 2)
	if err != nil || len(rest) != 1 || rest[0].Partition != a || rest[0].Base != 0 {
		t.Fatalf("second page = %+v, %v", rest, err)
	}
	from := t0.Add(time.Second)
	if recent, _ := store.ListSegments(e.ctx, e.pool, store.SegmentFilter{From: &from}, nil, 10); len(recent) != 2 {
		t.Errorf("segments since %s: %+v", from, recent)
	}
	var qid int64
	_ = e.pool.QueryRow(e.ctx, `SELECT id FROM lethe.queues WHERE name = 'q'`).Scan(&qid)
	n, done, err := store.DeleteQueueStep(e.ctx, e.pool, qid, 2)
	if err != nil || n != 2 || done {
		t.Errorf("first delete step = %d, %v, %v; want 2 segments, not done", n, done, err)
	}
	n, done, err = store.DeleteQueueStep(e.ctx, e.pool, qid, 2)
	if err != nil || n != 1 || !done {
		t.Errorf("second delete step = %d, %v, %v; want 1 segment, done", n, done, err)
	}
	if st, hashes, _ := store.Totals(e.ctx, e.pool); st.Segments != 0 || hashes != 0 {
		t.Errorf("after deleting the queue: %+v and %d hashes stored", st, hashes)
	}
	if _, _, found, err := store.ReadSegment(e.ctx, e.pool, refs[0]); found || err != nil {
		t.Errorf("reading a deleted segment: found %v, %v", found, err)
	}
}
