package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// appender is group commit, at two levels. Within a partition, pushes that
// arrive while a write to it is in flight wait and go together in the next
// segment, so batch=1 traffic costs a fraction of a row per message. Across
// partitions, segments ready at the same moment are written by one
// transaction (a commit group), so pushes spread over many partitions share
// one commit instead of paying one each. A caller is answered only after the
// transaction holding its frames has committed.
type appender struct {
	e  *Engine
	mu sync.Mutex
	// inflight holds, per partition, the batches waiting for the write in
	// flight; a partition is present only while a flusher runs for it.
	inflight map[uuid.UUID]*pending
	// jobs carries each partition's next segment to the committers.
	jobs chan *flushJob
	stop <-chan struct{}
}

// Commit groups: how many write at once, and how much one takes.
const (
	committers         = 4
	commitGroupMaxJobs = 128
)

// flushJob is one partition's next segment, waiting for a commit group.
type flushJob struct {
	pid  uuid.UUID
	reqs []*appendReq
	err  error
	done chan struct{}
}

type pending struct{ reqs []*appendReq }

// appendReq is one request's frames for one partition.
type appendReq struct {
	queue     string
	partition string
	hashes    []int64
	frames    [][]byte
	times     []time.Time
	bytes     int
	// results[i] is the outcome of frames[i]; filled before done closes.
	results []appendResult
	err     error
	done    chan struct{}
}

type appendResult struct {
	offset    int64
	duplicate bool
}

func newAppender(e *Engine, stop <-chan struct{}) *appender {
	a := &appender{e: e, inflight: map[uuid.UUID]*pending{}, jobs: make(chan *flushJob), stop: stop}
	for range committers {
		go a.commitLoop()
	}
	return a
}

// commitLoop takes the next segment, and every other one ready now, and
// writes them in one transaction.
func (a *appender) commitLoop() {
	for {
		var group []*flushJob
		select {
		case <-a.stop:
			return
		case j := <-a.jobs:
			group = append(group, j)
		}
	gather:
		for len(group) < commitGroupMaxJobs {
			select {
			case j := <-a.jobs:
				group = append(group, j)
			default:
				break gather
			}
		}
		a.e.writeGroup(context.Background(), group)
		for _, j := range group {
			close(j.done)
		}
	}
}

// writeGroup writes the segments of several partitions in one transaction,
// locking partitions in id order so two groups can never deadlock. If the
// transaction fails, each segment is written on its own, so one partition's
// problem (deleted meanwhile, say) stays its own.
func (e *Engine) writeGroup(ctx context.Context, group []*flushJob) {
	if len(group) == 1 {
		group[0].err = e.writeSegment(ctx, e.pool, group[0].pid, group[0].reqs)
		return
	}
	slices.SortFunc(group, func(x, y *flushJob) int { return bytes.Compare(x.pid[:], y.pid[:]) })
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		for _, j := range group {
			if err := e.writeSegment(ctx, tx, j.pid, j.reqs); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		return
	}
	for _, j := range group {
		j.err = e.writeSegment(ctx, e.pool, j.pid, j.reqs)
	}
}

// append writes req's frames to partition pid and waits for the commit.
func (a *appender) append(ctx context.Context, pid uuid.UUID, req *appendReq) error {
	req.done = make(chan struct{})
	a.mu.Lock()
	p, running := a.inflight[pid]
	if !running {
		p = &pending{}
		a.inflight[pid] = p
	}
	p.reqs = append(p.reqs, req)
	a.mu.Unlock()
	if !running {
		go a.flushLoop(pid)
	}
	select {
	case <-req.done:
		return req.err
	case <-ctx.Done():
		// The write may still commit; a retry with the same transaction
		// ids is answered as duplicate, so nothing is stored twice.
		return ctx.Err()
	}
}

// flushLoop writes the partition's waiting requests, a segment at a time,
// until none are left.
func (a *appender) flushLoop(pid uuid.UUID) {
	for {
		a.mu.Lock()
		p := a.inflight[pid]
		if len(p.reqs) == 0 {
			delete(a.inflight, pid)
			a.mu.Unlock()
			return
		}
		n, frames, bytes := 0, 0, 0
		for n < len(p.reqs) {
			r := p.reqs[n]
			if n > 0 && (frames+len(r.frames) > a.e.cfg.SegmentMaxFrames || bytes+r.bytes > a.e.cfg.SegmentMaxBytes) {
				break
			}
			frames += len(r.frames)
			bytes += r.bytes
			n++
		}
		batch := p.reqs[:n:n]
		p.reqs = p.reqs[n:]
		a.mu.Unlock()

		job := &flushJob{pid: pid, reqs: batch, done: make(chan struct{})}
		select {
		case a.jobs <- job:
			<-job.done
		case <-a.stop:
			// Shutting down: no committer is listening any more.
			job.err = a.e.writeSegment(context.Background(), a.e.pool, pid, batch)
		}
		err := job.err
		for _, r := range batch {
			r.err = err
			close(r.done)
		}
	}
}

// querier is what writeSegment needs: the pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// errPartitionGone is the append function's answer for a deleted partition.
var errPartitionGone = errors.New("partition no longer exists")

// writeSegment appends the frames of reqs to one segment of pid in one round
// trip and fills each request's results. Frames are concatenated here, and a
// transaction id repeated within the batch is answered here as a duplicate
// of its first occurrence, so the database stores the segment without
// per-frame work.
func (e *Engine) writeSegment(ctx context.Context, q querier, pid uuid.UUID, reqs []*appendReq) error {
	n, size := 0, 0
	for _, r := range reqs {
		n += len(r.frames)
		size += r.bytes
	}
	// repeatOf[i] is the input position of the first frame with the same
	// hash, or -1; sent maps a sent frame to its input position.
	repeatOf := make([]int, n)
	sent := make([]int, 0, n)
	first := make(map[int64]int, n)
	hashes := make([]int64, 0, n)
	lens := make([]int32, 0, n)
	blob := make([]byte, 0, size)
	firstAt, lastAt := reqs[0].times[0], reqs[0].times[0]
	i := 0
	for _, r := range reqs {
		for k, f := range r.frames {
			h := r.hashes[k]
			if j, ok := first[h]; ok {
				repeatOf[i] = j
				i++
				continue
			}
			first[h] = i
			repeatOf[i] = -1
			sent = append(sent, i)
			hashes = append(hashes, h)
			lens = append(lens, int32(len(f)))
			blob = append(blob, f...)
			firstAt, lastAt = minTime(firstAt, r.times[k]), maxTime(lastAt, r.times[k])
			i++
		}
	}
	var base *int64
	var dupIdx []int32
	var dupOffsets []int64
	rows, err := q.Query(ctx, `SELECT base_offset, dup_idx, dup_offsets FROM lethe.append($1, $2, $3, $4, $5, $6, $7)`,
		pid, hashes, lens, blob, firstAt, lastAt, e.clock.Now())
	if err == nil {
		for rows.Next() {
			err = rows.Scan(&base, &dupIdx, &dupOffsets)
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "P0002" {
			return errPartitionGone
		}
		return fmt.Errorf("append to partition %s: %w", pid, err)
	}
	results := make([]appendResult, n)
	for k, j := range dupIdx {
		results[sent[j-1]] = appendResult{offset: dupOffsets[k], duplicate: true}
	}
	next := int64(0)
	if base != nil {
		next = *base
	}
	for _, at := range sent {
		if !results[at].duplicate {
			results[at].offset = next
			next++
		}
	}
	for at, j := range repeatOf {
		if j >= 0 {
			results[at] = appendResult{offset: results[j].offset, duplicate: true}
		}
	}
	i = 0
	for _, r := range reqs {
		r.results = results[i : i+len(r.frames)]
		i += len(r.frames)
	}
	return nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
