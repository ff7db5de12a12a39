package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/store"
	"github.com/lethe-mq/lethe/internal/store/storetest"
)

// Reads span segments and stop at the limit.
func TestReadAcrossSegments(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.partition("q", "p")
	e.appendAt(e.pool, pid, t0, "a", "b")
	e.appendAt(e.pool, pid, t0, "c")
	e.appendAt(e.pool, pid, t0, "d", "e", "f")
	for _, c := range []struct {
		from  int64
		limit int
		want  string
	}{
		{0, 10, "0:a 1:b 2:c 3:d 4:e 5:f"},
		{1, 3, "1:b 2:c 3:d"},
		{4, 1, "4:e"},
		{5, 5, "5:f"},
		{6, 5, ""},
	} {
		if got := strings.Join(e.read(pid, c.from, c.limit, store.Everything()), " "); got != c.want {
			t.Errorf("read from %d limit %d = %q, want %q", c.from, c.limit, got, c.want)
		}
	}
}

// Offsets need not be contiguous: a reader skips what is not stored,
// wherever the gap is (the head, as retention leaves it; the middle, as a
// dropped time partition or a held area can), and a read starting below the
// first stored offset starts at it.
func TestReadSkipsGaps(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.partition("q", "p")
	e.appendAt(e.pool, pid, t0, "a", "b") // 0-1
	e.appendAt(e.pool, pid, t0, "c", "d") // 2-3
	e.appendAt(e.pool, pid, t0, "e")      // 4
	e.appendAt(e.pool, pid, t0, "f", "g") // 5-6
	for _, base := range []int64{0, 4} {
		if err := storetest.Remove(e.ctx, e.pool, pid, base); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		from  int64
		limit int
		want  string
	}{
		{0, 10, "2:c 3:d 5:f 6:g"},
		{1, 2, "2:c 3:d"},
		{3, 2, "3:d 5:f"},
		{4, 10, "5:f 6:g"},
		{7, 10, ""},
	} {
		if got := strings.Join(e.read(pid, c.from, c.limit, store.Everything()), " "); got != c.want {
			t.Errorf("read from %d limit %d = %q, want %q", c.from, c.limit, got, c.want)
		}
	}
	h, err := store.ReadHead(e.ctx, e.pool, pid)
	if err != nil || h.First != 2 || h.Next != 7 || h.Empty {
		t.Errorf("head = %+v, %v; want first 2 (the first stored segment), next 7", h, err)
	}
	for _, base := range []int64{2, 5} {
		_ = storetest.Remove(e.ctx, e.pool, pid, base)
	}
	if h, err := store.ReadHead(e.ctx, e.pool, pid); err != nil || !h.Empty || h.Next != 7 {
		t.Errorf("head of an emptied partition = %+v, %v; want empty, next 7", h, err)
	}
}

// The visibility cut stops a read before the first frame created after it,
// even when later frames are older (a read never skips ahead of a delayed
// message).
func TestReadStopsAtVisibilityCut(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.partition("q", "p")
	e.appendAt(e.pool, pid, t0, "a")
	e.appendAt(e.pool, pid, t0.Add(time.Minute), "b")
	e.appendAt(e.pool, pid, t0, "c")
	if got := strings.Join(e.read(pid, 0, 10, t0.Add(time.Second)), " "); got != "0:a" {
		t.Errorf("read with the cut before b = %q, want only a", got)
	}
	if got := strings.Join(e.read(pid, 0, 10, t0.Add(time.Minute)), " "); got != "0:a 1:b 2:c" {
		t.Errorf("read with the cut at b = %q, want all", got)
	}
}

// A claim reads lethe.read_segments in its cursor lock's statement, which
// has no ORDER BY, and decodes the rows with DecodeSegments, as Read does
// its own: whatever order they come in, they decode to what Read returns
// (gaps, limits, the byte bound and the visibility cut included). Fails
// when the decoder takes the rows in the order given.
func TestSegmentsDecodeAsRead(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.partition("q", "p")
	e.appendAt(e.pool, pid, t0, "a", "b")             // 0-1
	e.appendAt(e.pool, pid, t0, "c", "d")             // 2-3, removed
	e.appendAt(e.pool, pid, t0.Add(time.Minute), "e") // 4
	e.appendAt(e.pool, pid, t0, "f", "g", "h")        // 5-7
	if err := storetest.Remove(e.ctx, e.pool, pid, 2); err != nil {
		t.Fatal(err)
	}
	for _, from := range []int64{0, 1, 2, 4, 6, 8} {
		for _, limit := range []int{0, 1, 2, 4, 10} {
			for _, cut := range []time.Time{store.Everything(), t0.Add(time.Second)} {
				for _, maxBytes := range []int64{0, 1, 4, 7} {
					decodeAsRead(t, e, pid, from, limit, maxBytes, cut)
				}
			}
		}
	}
}

func decodeAsRead(t *testing.T, e *env, pid uuid.UUID, from int64, limit int, maxBytes int64, cut time.Time) {
	t.Helper()
	want, err := store.Read(e.ctx, e.pool, pid, from, limit, maxBytes, cut)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := e.pool.Query(e.ctx, `SELECT base_offset, last_offset, last_at, frames
					FROM lethe.read_segments($1, $2, $3, $4) ORDER BY base_offset DESC`, pid, from, limit, store.ReadBytesBound(maxBytes))
	if err != nil {
		t.Fatal(err)
	}
	segs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Segment, error) {
		var s store.Segment
		err := r.Scan(&s.Base, &s.Last, &s.LastAt, &s.Frames)
		return s, err
	})
	if err != nil {
		t.Fatal(err)
	}
	got := store.DecodeSegments(pid, from, limit, maxBytes, cut, segs)
	if g, w := strings.Join(describe(got), " "), strings.Join(describe(want), " "); g != w {
		t.Errorf("from %d limit %d bytes %d cut %s: decoded %q, Read %q", from, limit, maxBytes, cut.Format(time.TimeOnly), g, w)
	}
}

// Time lookups: the first offset at or after a time (seek), and the store's
// SQL functions that read models use.
func TestOffsetAtAndTimeFunctions(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.partition("q", "p")
	e.appendAt(e.pool, pid, t0, "a", "b")                           // 0-1
	e.appendAt(e.pool, pid, t0.Add(time.Minute), "c")               // 2
	e.appendAt(e.pool, pid, t0.Add(2*time.Minute), "d")             // 3
	e.appendAt(e.pool, pid, t0.Add(3*time.Minute), "e")             // 4
	if err := storetest.Remove(e.ctx, e.pool, pid, 3); err != nil { // a gap at 3
		t.Fatal(err)
	}
	for _, c := range []struct {
		at   time.Time
		want int64
	}{
		{t0.Add(-time.Hour), 0},
		{t0, 0},
		{t0.Add(time.Second), 2},
		{t0.Add(90 * time.Second), 4}, // 3 is not stored: the next stored one
		{t0.Add(time.Hour), 5},        // nothing: the next offset
	} {
		got, err := store.OffsetAt(e.ctx, e.pool, pid, c.at)
		if err != nil || got != c.want {
			t.Errorf("OffsetAt(%s) = %d, %v; want %d", c.at.Sub(t0), got, err, c.want)
		}
	}
	for _, c := range []struct {
		offset int64
		want   *time.Time
	}{
		{0, &t0}, {1, &t0}, {3, ptr(t0.Add(3 * time.Minute))}, {5, nil},
	} {
		var got *time.Time
		if err := e.pool.QueryRow(e.ctx, `SELECT lethe.store_time_at($1, $2)`, pid, c.offset).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if (got == nil) != (c.want == nil) || got != nil && !got.Equal(*c.want) {
			t.Errorf("store_time_at(%d) = %v, want %v", c.offset, got, c.want)
		}
	}
	var since *int64
	if err := e.pool.QueryRow(e.ctx, `SELECT lethe.store_offset_since($1, $2)`, pid, t0.Add(90*time.Second)).Scan(&since); err != nil || since == nil || *since != 4 {
		t.Errorf("store_offset_since = %v, %v; want 4", since, err)
	}
}

func ptr[T any](v T) *T { return &v }

// Stats count what is stored, gaps excluded.
func TestStats(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a, b, empty := e.partition("q1", "a"), e.partition("q1", "b"), e.partition("q2", "c")
	e.appendAt(e.pool, a, t0, "a0", "a1")
	e.appendAt(e.pool, a, t0, "a2")
	e.appendAt(e.pool, b, t0, "b0")
	_ = storetest.Remove(e.ctx, e.pool, a, 0)
	st, err := store.PartitionStats(e.ctx, e.pool, []uuid.UUID{a, b, empty})
	if err != nil {
		t.Fatal(err)
	}
	if st[a].Messages != 1 || st[a].Segments != 1 || st[a].Bytes == 0 || st[b].Messages != 1 || st[empty] != (store.Stats{}) {
		t.Errorf("partition stats = %+v", st)
	}
	var q1 int64
	if err := e.pool.QueryRow(e.ctx, `SELECT id FROM lethe.queues WHERE name = 'q1'`).Scan(&q1); err != nil {
		t.Fatal(err)
	}
	qs, err := store.QueueStats(e.ctx, e.pool, []int64{q1})
	if err != nil || qs[q1].Messages != 2 || qs[q1].Segments != 2 || qs[q1].Bytes != st[a].Bytes+st[b].Bytes {
		t.Errorf("queue stats = %+v, %v", qs, err)
	}
	total, hashes, err := store.Totals(e.ctx, e.pool)
	if err != nil || total.Messages != 2 || hashes != 2 {
		t.Errorf("totals = %+v, %d hashes, %v; want 2 messages and 2 hashes", total, hashes, err)
	}
	all, older, err := store.HashCounts(e.ctx, e.pool, q1, t0.Add(time.Second))
	if err != nil || all != 2 || older != 2 {
		t.Errorf("hash counts = %d, %d, %v", all, older, err)
	}
	if n, err := store.DiskBytes(e.ctx, e.pool); err != nil || n <= 0 {
		t.Errorf("disk bytes = %d, %v", n, err)
	}
}

// A read costs the same at the tail of a long partition as at its head:
// its scan starts at the segment holding from, through every leaf's
// primary key, under both of PostgreSQL's plan choices for the prepared
// statement. It fails when the scan walks the partition from its first
// segment (the lower bound as a join filter, which migration 156 replaced).
func TestReadCostDoesNotGrowWithThePartition(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.partition("q", "p")
	const segments = 20000
	e.longPartition(pid, segments)
	// blocks is what one read from from costs under plan mode mode.
	blocks := func(mode string, from int64) int64 {
		t.Helper()
		return e.blocksFetched(func(tx pgx.Tx) {
			if _, err := tx.Exec(e.ctx, `SET LOCAL plan_cache_mode = `+mode); err != nil {
				t.Fatal(err)
			}
			frames, err := store.Read(e.ctx, tx, pid, from, 10, 0, store.Everything())
			if err != nil {
				t.Fatal(err)
			}
			if want := min(10, segments-from); int64(len(frames)) != want || frames[0].Offset != from {
				t.Fatalf("%s read from %d: %d frames, want %d from %d", mode, from, len(frames), want, from)
			}
		})
	}
	for _, mode := range []string{"force_generic_plan", "force_custom_plan"} {
		head, tail := blocks(mode, 1), blocks(mode, segments-5)
		if tail > 2*head+20 {
			t.Errorf("%s: a read at the tail of %d segments fetched %d blocks, at the head %d: the scan walks the partition",
				mode, segments, tail, head)
		}
		t.Logf("%s: %d blocks at the head, %d at the tail", mode, head, tail)
	}
}

// longPartition stores n one-frame segments in pid, offset o appended (and
// its frame's segment ending) at t0 + o seconds, bypassing lethe.append.
func (e *env) longPartition(pid uuid.UUID, n int) {
	e.t.Helper()
	if err := storetest.Write(e.ctx, e.pool, storetest.Segment{Partition: pid, Base: 0, Count: 1,
		FirstAt: t0, LastAt: t0, Frames: encode("x", t0)}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.pool.Exec(e.ctx, `
		INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count, first_at, last_at,
		                            byte_size, frames, tier, appended_at)
		SELECT s.partition_id, o, o, 1, s.first_at + make_interval(secs => o), s.last_at + make_interval(secs => o),
		       s.byte_size, s.frames, s.tier, s.appended_at + make_interval(secs => o)
		  FROM lethe.segments s, generate_series(1, $2::bigint - 1) o
		 WHERE s.partition_id = $1 AND s.base_offset = 0`, pid, n); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.pool.Exec(e.ctx, `UPDATE lethe.partitions SET next_offset = $2, last_push_at = $3 WHERE id = $1`,
		pid, n, t0.Add(time.Duration(n-1)*time.Second)); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.pool.Exec(e.ctx, `ANALYZE lethe.segments`); err != nil {
		e.t.Fatal(err)
	}
}

// blocksFetched runs f in a transaction and answers how many blocks of the
// log's tables and indexes PostgreSQL fetched for it.
func (e *env) blocksFetched(f func(tx pgx.Tx)) int64 {
	e.t.Helper()
	tx, err := e.pool.Begin(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(e.ctx) }()
	// The counts pending in this backend, before and after: they may hold
	// earlier transactions' until the backend reports them.
	fetched := func() (n int64) {
		if err := tx.QueryRow(e.ctx, `
			SELECT sum(pg_stat_get_xact_blocks_fetched(c.oid))::bigint FROM pg_class c
			  JOIN pg_namespace ns ON ns.oid = c.relnamespace
			 WHERE ns.nspname = 'lethe' AND c.relname LIKE 'segments%'`).Scan(&n); err != nil {
			e.t.Fatal(err)
		}
		return n
	}
	before := fetched()
	f(tx)
	return fetched() - before
}

// A seek to a recent time (a subscription starting now) costs what was
// appended since, not the partition's history; a seek into the past still
// answers exactly. Fails when OffsetAt scans from the partition's head
// whatever the time.
func TestOffsetAtRecentTimeDoesNotScanThePartition(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.partition("q", "p")
	const segments = 20000
	e.longPartition(pid, segments)
	for _, k := range []int64{0, 3, 500, 5000, segments - 1500, segments - 5, segments - 1, segments, segments + 100} {
		at := t0.Add(time.Duration(k)*time.Second - time.Millisecond)
		var got int64
		blocks := e.blocksFetched(func(tx pgx.Tx) {
			var err error
			if got, err = store.OffsetAt(e.ctx, tx, pid, at); err != nil {
				t.Fatal(err)
			}
		})
		if want := min(k, segments); got != want {
			t.Errorf("OffsetAt(t0 + %d s - 1 ms) = %d, want %d", k, got, want)
		}
		if k >= segments-5 && blocks > 60 {
			t.Errorf("OffsetAt %d s after the first of %d segments fetched %d blocks: it scanned the partition", k, segments, blocks)
		}
		t.Logf("OffsetAt(t0 + %d s): %d blocks", k, blocks)
	}
}

// A segment of the legacy leaf (stored before migration 050: appended_at
// -infinity) may hold messages of any time, so a seek that meets one scans
// from the head. Fails when the tail scan takes -infinity for "appended
// before the time sought" and skips the legacy segment.
func TestOffsetAtMeetsALegacySegment(t *testing.T) {
	t.Parallel()
	e := setup(t)
	if _, err := e.pool.Exec(e.ctx, `
		CREATE TABLE lethe.segments_forever_legacy (LIKE lethe.segments_forever INCLUDING DEFAULTS);
		ALTER TABLE lethe.segments_forever_legacy ADD PRIMARY KEY (partition_id, base_offset);
		ALTER TABLE lethe.segments_forever ATTACH PARTITION lethe.segments_forever_legacy
		      FOR VALUES FROM (MINVALUE) TO ('0001-01-01 00:00:00+00')`); err != nil {
		t.Fatal(err)
	}
	pid := e.partition("q", "p")
	late := t0.Add(time.Minute)
	if _, err := e.pool.Exec(e.ctx, `
		INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count, first_at, last_at,
		                            byte_size, frames, tier, appended_at)
		VALUES ($1, 0, 0, 1, $2, $2, $3, $4, 'forever', '-infinity')`, pid, late, len(encode("old", late)), encode("old", late)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(e.ctx, `UPDATE lethe.partitions SET next_offset = 1, last_push_at = $2 WHERE id = $1`, pid, late); err != nil {
		t.Fatal(err)
	}
	e.appendAt(e.pool, pid, t0.Add(2*time.Minute), "a") // 1
	e.appendAt(e.pool, pid, t0.Add(3*time.Minute), "b") // 2
	if got, err := store.OffsetAt(e.ctx, e.pool, pid, t0); err != nil || got != 0 {
		t.Errorf("OffsetAt(t0) = %d, %v; want 0, the legacy segment's message created at t0 + 1 min", got, err)
	}
	if got, err := store.OffsetAt(e.ctx, e.pool, pid, t0.Add(150*time.Second)); err != nil || got != 2 {
		t.Errorf("OffsetAt(t0 + 150 s) = %d, %v; want 2", got, err)
	}
}

// lethe.store_offset_since (the lag of a group that has not popped a
// partition yet) answers as OffsetAt does at segment granularity, from the
// tail for a recent time, and meets the legacy leaf by scanning from the
// head. Fails when it scans the partition whatever the time.
func TestStoreOffsetSinceFromTheTail(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.partition("q", "p")
	const segments = 20000
	e.longPartition(pid, segments)
	for _, k := range []int64{0, 500, segments - 1500, segments - 5, segments - 1, segments} {
		at := t0.Add(time.Duration(k)*time.Second - time.Millisecond)
		var got *int64
		blocks := e.blocksFetched(func(tx pgx.Tx) {
			if err := tx.QueryRow(e.ctx, `SELECT lethe.store_offset_since($1, $2)`, pid, at).Scan(&got); err != nil {
				t.Fatal(err)
			}
		})
		switch {
		case k == segments && got != nil:
			t.Errorf("store_offset_since(t0 + %d s) = %d, want NULL", k, *got)
		case k < segments && (got == nil || *got != k):
			t.Errorf("store_offset_since(t0 + %d s) = %v, want %d", k, got, k)
		}
		if k >= segments-5 && blocks > 60 {
			t.Errorf("store_offset_since %d s after the first of %d segments fetched %d blocks: it scanned the partition", k, segments, blocks)
		}
		t.Logf("store_offset_since(t0 + %d s): %d blocks", k, blocks)
	}
}
