package engine

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/frame"
	"github.com/lethe-mq/lethe/internal/store"
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
	// closed refuses new appends once Close began.
	closed bool
	// jobs hands a flusher's segment to the writer holding a slot, which
	// writes it with its own.
	jobs chan *flushJob
	// slots bounds the transactions writing segments at once.
	slots chan struct{}
}

// Commit groups: how many write at once, and how much one takes. Two
// writers keep one group's statement running while another commits; four
// made groups half as large, and so twice the commits, for the same
// throughput on two cores (BENCHMARKS, "Two write slots").
const (
	writeSlots         = 2
	commitGroupMaxJobs = 128
)

// errClosed answers a push after Close.
var errClosed = errors.New("engine is shutting down")

// flushJob is one partition's next segment, waiting for a commit group.
type flushJob struct {
	pid  uuid.UUID
	reqs []*appendReq
	err  error
	done chan struct{}
}

type pending struct{ reqs []*appendReq }

// appendReq is one request's messages for one partition. They are encoded
// when their segment is (segmentOf), straight into it: a payload still
// aliases the request body until then, and is copied once.
type appendReq struct {
	queue     string
	partition string
	pid       uuid.UUID // set by a transaction, which writes without the appender
	hashes    []int64
	// minted[i] says msgs[i] has no transaction id: lethe names it by its
	// offset (store.Batch.AddMinted).
	minted []bool
	msgs   []frame.Message
	// bytes is the frames' encoded length (frame.Len), which the segment
	// limits count.
	bytes int
	// results[i] is the outcome of msgs[i]; filled before done closes.
	results []store.Appended
	err     error
	done    chan struct{}
}

// add appends one message to r, keeping its per-message slices in step.
func (r *appendReq) add(hash int64, minted bool, m frame.Message) {
	r.hashes = append(r.hashes, hash)
	r.minted = append(r.minted, minted)
	r.msgs = append(r.msgs, m)
	r.bytes += frame.Len(m)
}

func newAppender(e *Engine) *appender {
	return &appender{e: e, inflight: map[uuid.UUID]*pending{}, jobs: make(chan *flushJob),
		slots: make(chan struct{}, writeSlots)}
}

// close refuses further appends; those already waiting are still written.
func (a *appender) close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
}

// writeInSlot writes group, and every other segment ready by now, in one
// transaction, holding a slot it gives back after; it closes each job's
// done.
func (a *appender) writeInSlot(group []*flushJob) {
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
	<-a.slots
	for _, j := range group {
		close(j.done)
	}
}

// writeGroup writes the segments of several partitions in one transaction
// (writeTogether). A group of one, or each segment of a group whose
// transaction failed, is written on its own, so one partition's problem
// (deleted meanwhile, say) stays its own. Each commit is observed
// (Hooks.CommitGroup) with the partitions it wrote.
func (e *Engine) writeGroup(ctx context.Context, group []*flushJob) {
	defer e.signalFlush(group)
	if len(group) > 1 && e.writeTogether(ctx, group) {
		e.observeCommit(len(group))
		return
	}
	for _, j := range group {
		if j.err = e.writeSegment(ctx, e.pool, j.pid, j.reqs); j.err == nil {
			e.observeCommit(1)
		}
	}
}

// writeTogether writes group's segments in one transaction, partitions
// locked in store.LockOrder so two groups can never deadlock, and says
// whether it committed.
func (e *Engine) writeTogether(ctx context.Context, group []*flushJob) bool {
	slices.SortFunc(group, func(x, y *flushJob) int { return store.LockOrder(x.pid, y.pid) })
	now := e.clock.Now()
	pids := make([]uuid.UUID, len(group))
	segments := make([]*store.Batch, len(group))
	for i, j := range group {
		pids[i], segments[i] = j.pid, segmentOf(j.reqs)
	}
	// The common case in one statement per step for the whole group.
	results, ok, err := store.AppendGroup(ctx, e.pool, pids, segments, now)
	if err == nil && ok {
		for i, j := range group {
			fillResults(j.reqs, results[i])
		}
		return true
	}
	// Else (a producer id may repeat, a partition may be gone) one
	// lethe.append per partition, in one round trip: pipelined as one
	// batch, which PostgreSQL runs as one implicit transaction (committed
	// at the batch's Sync, rolled back whole on any error), so there is no
	// BEGIN or COMMIT of its own to wait for either.
	batch := &pgx.Batch{}
	for i, j := range group {
		store.QueueAppend(batch, j.pid, segments[i], now, func(results []store.Appended, err error) {
			if err == nil {
				fillResults(j.reqs, results)
			}
		})
	}
	return e.pool.SendBatch(ctx, batch).Close() == nil
}

// observeCommit reports one commit of the appender to metrics.
func (e *Engine) observeCommit(partitions int) {
	if h := e.cfg.Hooks.CommitGroup; h != nil {
		h(partitions)
	}
}

// signalFlush reports a commit group to tests.
func (e *Engine) signalFlush(group []*flushJob) {
	f := Flush{Partitions: len(group)}
	for _, j := range group {
		for _, r := range j.reqs {
			f.Frames += len(r.msgs)
		}
	}
	e.cfg.TestSignals.Flushed.Signal(f)
}

// append writes req's frames to partition pid and waits for the commit.
func (a *appender) append(ctx context.Context, pid uuid.UUID, req *appendReq) error {
	req.done = make(chan struct{})
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return errClosed
	}
	p, running := a.inflight[pid]
	if !running {
		p = &pending{}
		a.inflight[pid] = p
		// Counted before close() can see this flush, so Close waits for it.
		a.e.bg.Add(1)
	}
	p.reqs = append(p.reqs, req)
	a.mu.Unlock()
	if !running {
		// The partition was idle, so this request's goroutine flushes it:
		// at low load a push is then written without a hand-off to other
		// goroutines. What arrived meanwhile gets a flusher of its own.
		a.flushNext(pid)
		if a.stillPending(pid) {
			a.e.goBackground(func() { a.flushLoop(pid) })
		}
		a.e.bg.Done()
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
	for a.flushNext(pid) {
	}
}

// flushNext writes the partition's next segment and answers its requests;
// false when none waited (the partition's flushing is then over).
func (a *appender) flushNext(pid uuid.UUID) bool {
	batch := a.next(pid)
	if batch == nil {
		return false
	}
	job := &flushJob{pid: pid, reqs: batch, done: make(chan struct{})}
	a.commit(job)
	for _, r := range batch {
		r.err = job.err
		close(r.done)
	}
	return true
}

// commit writes job and returns when it is written: by this goroutine
// when it gets a slot (taking along the segments other flushers are
// offering), else by the flusher that gets one first.
func (a *appender) commit(job *flushJob) {
	select {
	case a.slots <- struct{}{}:
		a.writeInSlot([]*flushJob{job})
	case a.jobs <- job:
		<-job.done
	}
}

// stillPending says whether requests wait for partition pid; if none do,
// the partition's flushing ends here (the next push starts it again).
func (a *appender) stillPending(pid uuid.UUID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.inflight[pid].reqs) == 0 {
		delete(a.inflight, pid)
		return false
	}
	return true
}

// next takes the partition's next segment's worth of waiting requests (one
// request is never split), or nil, ending the flusher, when none wait.
func (a *appender) next(pid uuid.UUID) []*appendReq {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.inflight[pid]
	if len(p.reqs) == 0 {
		delete(a.inflight, pid)
		return nil
	}
	n, frames, size := 0, 0, 0
	for n < len(p.reqs) {
		r := p.reqs[n]
		if n > 0 && (frames+len(r.msgs) > a.e.cfg.SegmentMaxFrames || size+r.bytes > a.e.cfg.SegmentMaxBytes) {
			break
		}
		frames += len(r.msgs)
		size += r.bytes
		n++
	}
	batch := p.reqs[:n:n]
	p.reqs = p.reqs[n:]
	return batch
}

// writeSegment appends the frames of reqs as one segment of pid in one round
// trip and fills each request's results.
func (e *Engine) writeSegment(ctx context.Context, q store.Querier, pid uuid.UUID, reqs []*appendReq) error {
	results, err := store.Append(ctx, q, pid, segmentOf(reqs), e.clock.Now())
	if err != nil {
		return err
	}
	fillResults(reqs, results)
	return nil
}

// segmentOf gathers the frames of reqs, in order, into one segment's batch.
func segmentOf(reqs []*appendReq) *store.Batch {
	n, size := 0, 0
	for _, r := range reqs {
		n += len(r.msgs)
		size += r.bytes
	}
	b := store.NewBatch(n, size)
	for _, r := range reqs {
		for k, m := range r.msgs {
			b.AddMessage(r.hashes[k], m, r.minted[k])
		}
	}
	return b
}

// fillResults hands each request its share of a segment's results.
func fillResults(reqs []*appendReq, results []store.Appended) {
	i := 0
	for _, r := range reqs {
		r.results = results[i : i+len(r.msgs)]
		i += len(r.msgs)
	}
}
