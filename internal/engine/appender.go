package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// appender is group commit: pushes to one partition that arrive while a
// write to it is in flight wait and go together in the next segment, so
// batch=1 traffic costs a fraction of a row per message. A caller is answered
// only after the segment holding its frames has committed.
type appender struct {
	e  *Engine
	mu sync.Mutex
	// inflight holds, per partition, the batches waiting for the write in
	// flight; a partition is present only while a flusher runs for it.
	inflight map[uuid.UUID]*pending
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

func newAppender(e *Engine) *appender {
	return &appender{e: e, inflight: map[uuid.UUID]*pending{}}
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

		err := a.e.writeSegment(context.Background(), a.e.pool, pid, batch)
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
// trip and fills each request's results.
func (e *Engine) writeSegment(ctx context.Context, q querier, pid uuid.UUID, reqs []*appendReq) error {
	var hashes []int64
	var frames [][]byte
	var times []time.Time
	for _, r := range reqs {
		hashes = append(hashes, r.hashes...)
		frames = append(frames, r.frames...)
		times = append(times, r.times...)
	}
	rows, err := q.Query(ctx, `SELECT idx, msg_offset, duplicate FROM lethe.append($1, $2, $3, $4, $5)`,
		pid, hashes, frames, times, e.clock.Now())
	if err != nil {
		return fmt.Errorf("append to partition %s: %w", pid, err)
	}
	results := make([]appendResult, len(hashes))
	for rows.Next() {
		var idx int
		var r appendResult
		if err := rows.Scan(&idx, &r.offset, &r.duplicate); err != nil {
			rows.Close()
			return fmt.Errorf("append to partition %s: %w", pid, err)
		}
		results[idx-1] = r
	}
	if err := rows.Err(); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "P0002" {
			return errPartitionGone
		}
		return fmt.Errorf("append to partition %s: %w", pid, err)
	}
	i := 0
	for _, r := range reqs {
		r.results = results[i : i+len(r.frames)]
		i += len(r.frames)
	}
	return nil
}
