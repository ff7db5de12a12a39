package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/store"
)

// Bounds on pop parameters.
const (
	MaxBatch         = 10_000
	MaxPopTimeout    = 10 * time.Minute
	MaxPopPartitions = 100
	// repollInterval re-checks a long poll without a wake-up: it covers a
	// lost notification and messages whose delay has just passed.
	repollInterval = time.Second
)

// PopRequest asks for messages of one queue.
type PopRequest struct {
	Queue            string
	Partition        string // empty: any partition with work
	Group            string // empty: queue mode
	Batch            int
	Wait             bool
	Timeout          time.Duration
	AutoAck          bool
	SubscriptionMode string // "new": from now; any other value: from the oldest
	SubscriptionFrom string
	// MaxPartitions is how many partitions one pop may claim; Batch caps
	// the messages of all of them together, and they share one lease id.
	MaxPartitions int
	// Namespace and Task select queues when Queue is empty (GET /api/v1/pop).
	Namespace string
	Task      string
	// MaxBytes bounds the payloads of one pop's answer: it stops adding
	// messages once theirs reach it, after the first (0: the engine's
	// PopMaxBytes).
	MaxBytes int64
}

// Validate checks bounds and fills defaults.
func (r *PopRequest) Validate() error {
	// Popping by namespace/task names no queue: queues are found at pop time.
	byTask := r.Queue == "" && (r.Namespace != "" || r.Task != "")
	if !byTask {
		if err := ValidateName("queue", r.Queue); err != nil {
			return err
		}
	}
	if r.Queue == "" && r.Partition != "" {
		return invalidf("partition needs a queue")
	}
	if r.Partition != "" {
		if err := ValidateName("partition", r.Partition); err != nil {
			return err
		}
	}
	if r.Group == "" {
		r.Group = api.QueueModeGroup
	} else if err := ValidateName("consumerGroup", r.Group); err != nil {
		return err
	}
	if r.Batch == 0 {
		r.Batch = 1
	}
	if r.Batch < 1 || r.Batch > MaxBatch {
		return invalidf("batch must be between 1 and %d, got %d", MaxBatch, r.Batch)
	}
	if r.Timeout < 0 || r.Timeout > MaxPopTimeout {
		return invalidf("timeout must be between 0 and %d ms", MaxPopTimeout.Milliseconds())
	}
	if r.MaxPartitions == 0 {
		r.MaxPartitions = 1
	}
	if r.MaxPartitions < 1 || r.MaxPartitions > MaxPopPartitions {
		return invalidf("partitions must be between 1 and %d, got %d", MaxPopPartitions, r.MaxPartitions)
	}
	// subscriptionMode is never refused, as in Queen: "new" starts at now,
	// anything else at the oldest message (clients send "from_beginning").
	if r.SubscriptionFrom != "" && r.SubscriptionFrom != "now" {
		if _, err := time.Parse(time.RFC3339Nano, r.SubscriptionFrom); err != nil {
			return invalidf("subscriptionFrom must be \"now\" or an RFC 3339 time, got %q", r.SubscriptionFrom)
		}
	}
	return nil
}

// Pop leases messages to the request's group. With Wait it long-polls until
// messages arrive or Timeout passes; an empty response has no messages.
func (e *Engine) Pop(ctx context.Context, req PopRequest) (*api.PopResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if req.MaxBytes <= 0 {
		req.MaxBytes = e.cfg.PopMaxBytes
	}
	deadline := time.Now().Add(req.Timeout)
	var since uint64  // this long poll's place in line, kept across wake-ups
	var hint wakeHint // the partition the last wake-up named
	for {
		queues := []string{req.Queue}
		if req.Queue == "" {
			var err error
			if queues, err = e.queuesOf(ctx, req.Namespace, req.Task); err != nil {
				return nil, err
			}
		}
		var wake <-chan wakeHint
		cancel := func() {}
		if req.Wait {
			wake, since, cancel = e.notifier.subscribe(req.Group, since, queues...)
		}
		resp, err := e.popQueues(ctx, req, queues, hint)
		if err != nil || len(resp.Messages) > 0 || len(resp.Gaps) > 0 || !req.Wait {
			cancel()
			return resp, err
		}
		var woken bool
		woken, hint = e.waitForWake(ctx, wake, time.Until(deadline), queues)
		cancel()
		if !woken {
			return resp, nil
		}
	}
}

// waitForWake waits for a wake-up or the re-poll interval, and answers
// false when the long poll is over (deadline passed, request gone), with
// the wake-up's hint (none after the interval).
func (e *Engine) waitForWake(ctx context.Context, wake <-chan wakeHint, remaining time.Duration, queues []string) (bool, wakeHint) {
	if remaining <= 0 {
		return false, wakeHint{}
	}
	if len(queues) > 0 {
		e.cfg.TestSignals.Waiting.Signal(queues[0])
	}
	t := time.NewTimer(min(remaining, repollInterval))
	defer t.Stop()
	select {
	case hint := <-wake:
		return true, hint
	case <-t.C:
	case <-ctx.Done():
		return false, wakeHint{}
	}
	return true, wakeHint{}
}

// popQueues pops from the first of queues that has messages; hint is the
// partition a wake-up named (popOnce).
func (e *Engine) popQueues(ctx context.Context, req PopRequest, queues []string, hint wakeHint) (*api.PopResponse, error) {
	var resp *api.PopResponse
	for _, name := range queues {
		r := req
		r.Queue = name
		var err error
		if resp, err = e.popOnce(ctx, r, hint); err != nil || len(resp.Messages) > 0 || len(resp.Gaps) > 0 {
			return resp, err
		}
	}
	if resp == nil {
		resp = &api.PopResponse{Success: true, ConsumerGroup: groupLabel(req.Group), Messages: []api.Message{}}
	}
	return resp, nil
}

// queuesOf lists the queues of a namespace and/or task in the order a pop
// tries them: higher priority first, then by name.
func (e *Engine) queuesOf(ctx context.Context, namespace, task string) ([]string, error) {
	names, err := store.QueuesOf(ctx, e.pool, namespace, task)
	if err != nil {
		return nil, fmt.Errorf("list queues of namespace %q task %q: %w", namespace, task, err)
	}
	return names, nil
}

type candidate struct {
	pid  uuid.UUID
	name string
	// hasCursor is known when the candidate came from the candidates query:
	// then ensureCursor's round trip is skipped.
	hasCursor bool
}

// popOnce claims from up to MaxPartitions partitions of one queue, at most
// Batch messages in all, under one lease id: one extend renews them all,
// and each partition's lease settles with its own acks. A partition whose
// stored state cannot be served is skipped, logged and counted; the others
// are served. A pop answers empty only when no partition has unleased work
// for the group: when the partitions it listed were taken by concurrent
// consumers before it could claim them, it lists the others again. A pop
// woken for a partition of the queue (hint) tries it before any listing.
func (e *Engine) popOnce(ctx context.Context, req PopRequest, hint wakeHint) (*api.PopResponse, error) {
	resp := &api.PopResponse{Success: true, Queue: req.Queue, ConsumerGroup: groupLabel(req.Group), Messages: []api.Message{}}
	q, err := e.catalog.queue(ctx, req.Queue)
	if err != nil || q == nil {
		return resp, err
	}
	if err := e.needKey(q); err != nil {
		return nil, err
	}
	now := e.clock.Now()
	fromAt, err := e.subscription(ctx, q, req.Group, req.SubscriptionMode, req.SubscriptionFrom, now)
	if err != nil {
		return nil, err
	}
	// Each claim committed on its own: fire what they did even if a later
	// one fails.
	var fx effects
	defer e.fire(&fx)
	spec := claimSpec{leaseID: newLeaseID(q.ID), fromAt: fromAt, now: now}
	tried := make([]uuid.UUID, 0, 4*req.MaxPartitions) // never nil: NULL would exclude all
	var taken []uuid.UUID                              // tried, but other consumers had them
	retried := false
	limit := req.MaxPartitions * 4
	key := workKey{queue: q.ID, group: req.Group}
	fromList := false // the last round's candidates came from the work list
	for round := 0; round < maxPopRounds && !popFull(resp, req); round++ {
		var cands []candidate
		var gen uint64
		hinted := false
		if round == 0 && req.Partition == "" && hint.named() && hint.queueID == q.ID {
			// Woken for one partition: try it before listing (wakeHint).
			// Its cursor is assumed: without one the claim finds nothing
			// and the next round lists, which makes it.
			cands = e.work.lend(key, candidate{pid: hint.pid, name: hint.partition, hasCursor: true})
			hinted = len(cands) > 0
		}
		// A round from the list that left the pop short lists from the
		// database next: what the list holds may be stale.
		if req.Partition == "" && !fromList && len(cands) == 0 {
			cands, gen = e.work.take(key, fromAt, now, limit, tried)
			if len(cands) == 0 && e.work.await(ctx, key) {
				cands, gen = e.work.take(key, fromAt, now, limit, tried)
			}
		}
		fromList = len(cands) > 0
		if !fromList {
			if cands, gen, err = e.popCandidates(ctx, q, req, key, fromAt, now, tried, limit); err != nil {
				return resp, err
			}
		}
		if len(cands) == 0 {
			// Every partition with work was tried. A consumer that acks
			// at once releases its partition again within this pop: list
			// those other consumers had once more before answering empty
			// (not those that failed or had nothing to give).
			if retried || len(taken) == 0 {
				return resp, nil
			}
			retried = true
			tried = slices.DeleteFunc(tried, func(id uuid.UUID) bool { return slices.Contains(taken, id) })
			continue
		}
		for _, c := range cands {
			tried = append(tried, c.pid)
		}
		left, untried, err := e.claimAmong(ctx, q, req, cands, spec, resp, &fx)
		if req.Partition == "" {
			e.work.settle(key, gen, cands, untried)
		}
		if err != nil {
			return nil, err
		}
		if hinted && len(left) > 0 {
			// The partition the wake-up named was held or being claimed,
			// or has no cursor of the group yet: the pop goes on as if it
			// had not been named (a listing finds it if it is free), and
			// its release wakes a waiter for it.
			tried = slices.DeleteFunc(tried, func(id uuid.UUID) bool { return id == hint.pid })
			fromList = false
			continue
		}
		for _, c := range left {
			taken = append(taken, c.pid)
		}
		// The round's candidates were taken, or emptied, by concurrent
		// consumers of the group, which list the same least recently
		// popped partitions: list more of them next time rather than race
		// for as few again.
		if limit < maxCandidates {
			limit = min(2*limit, maxCandidates)
		}
		if req.Partition != "" {
			break
		}
	}
	return resp, nil
}

// maxPopRounds bounds how often one pop lists candidates again after
// concurrent consumers took the ones it listed; maxCandidates bounds how
// many one listing gives (the first lists 4 per partition the pop may
// claim, doubled after each round that left the pop short). A listed
// partition without the group's cursor gets one, so the bound is also
// how many cursors one round may create.
const (
	maxPopRounds  = 8
	maxCandidates = 64
)

// popFull says the pop has claimed all it may.
func popFull(resp *api.PopResponse, req PopRequest) bool {
	return resp.PartitionsClaimed >= req.MaxPartitions || len(resp.Messages) >= req.Batch ||
		(req.MaxBytes > 0 && popBytes(resp) >= req.MaxBytes)
}

// popBytes is the payload bytes of the messages a pop has claimed.
func popBytes(resp *api.PopResponse) int64 {
	var n int64
	for i := range resp.Messages {
		n += int64(len(resp.Messages[i].Data))
	}
	return n
}

// addClaimed adds what one partition gave to the response.
func addClaimed(resp *api.PopResponse, q *Queue, c candidate, group string, got claimed, fx *effects) {
	if got.unreadable > 0 {
		fx.unreadable(q.Name, c.name, got.unreadable, got.unreadableErr)
	}
	if got.expired > 0 {
		fx.expired(q.Name, group, got.expired)
	}
	if got.gap != nil {
		resp.Gaps = append(resp.Gaps, *got.gap)
		fx.gap(*got.gap, group)
	}
	if len(got.msgs) == 0 {
		return
	}
	if resp.PartitionsClaimed == 0 {
		resp.Partition, resp.PartitionID, resp.LeaseID = c.name, c.pid.String(), got.leaseID
	}
	resp.PartitionsClaimed++
	resp.Messages = append(resp.Messages, got.msgs...)
	fx.delivered(q.Name, group, len(got.msgs))
}

// rotateFailed records a pop of a partition that failed to serve, so the
// candidates of the next pops try the others first rather than failing on
// it every time. Best effort: it touches only last_pop_at.
func (e *Engine) rotateFailed(ctx context.Context, pid uuid.UUID, group string, now time.Time) {
	if err := store.MarkPopped(ctx, e.pool, pid, group, now); err != nil {
		e.log.Debug("could not rotate a failing partition", "partition", pid, "group", group, "error", err)
	}
}

// popCandidates lists the partitions a pop tries: the named one, or up to
// limit of those with work for the group. Of the latter it lists up to
// workListSize, leaves out those other pops of this replica are claiming,
// and keeps the rest in the work list of key for the next pops, answering
// the list's generation.
func (e *Engine) popCandidates(ctx context.Context, q *Queue, req PopRequest, key workKey, fromAt *time.Time,
	now time.Time, tried []uuid.UUID, limit int) ([]candidate, uint64, error) {
	if req.Partition == "" {
		mark, end := e.work.begin(key)
		defer end()
		cands, err := e.candidates(ctx, q, req.Group, fromAt, now, max(limit, workListSize), tried)
		if err != nil {
			return nil, 0, err
		}
		mine, gen := e.work.adopt(key, fromAt, now, mark, cands, limit)
		return mine, gen, nil
	}
	pid, ok, err := e.catalog.partitionID(ctx, q, req.Partition)
	if err != nil || !ok {
		return nil, 0, err
	}
	return []candidate{{pid: pid, name: req.Partition}}, 0, nil
}

func groupLabel(group string) string {
	if group == api.QueueModeGroup {
		return ""
	}
	return group
}

// candidates lists partitions of q that may have work for group: offsets
// past its cursor (and past low_watermark, below which nothing is stored),
// or a gap to tell (retention deleted past its cursor: the claim tells it
// and moves the cursor, even with nothing new to deliver), no live lease,
// not among tried. The least recently popped come first so partitions
// share the consumers fairly.
func (e *Engine) candidates(ctx context.Context, q *Queue, group string, fromAt *time.Time, now time.Time, limit int,
	tried []uuid.UUID) ([]candidate, error) {
	cands, err := store.WorkCandidates(ctx, e.pool, q.ID, group, now, fromAt, q.WindowBuffer, limit, q.DelayedProcessing, tried,
		func(pid uuid.UUID, name string, hasCursor bool) candidate {
			return candidate{pid: pid, name: name, hasCursor: hasCursor}
		})
	if err != nil {
		return nil, fmt.Errorf("find partitions of %s with work: %w", q.Name, err)
	}
	return cands, nil
}

// ensureCursor creates the group's cursor on pid where its subscription
// says it starts: from the oldest stored message, or the first at or after
// its start time. What retention deleted before the cursor existed is no
// gap of the group's (a pop reports a gap only below a cursor). It answers
// false when the partition is gone (cleaned up after it was listed).
func (e *Engine) ensureCursor(ctx context.Context, pid uuid.UUID, group string, fromAt *time.Time) (bool, error) {
	// Starting at the oldest message (no subscription time) needs no
	// lookup: one round trip.
	start := int64(-1)
	if fromAt != nil {
		exists, err := store.CursorExists(ctx, e.pool, pid, group)
		if err != nil {
			return false, fmt.Errorf("look up cursor: %w", err)
		}
		if exists {
			return true, nil
		}
		off, err := store.OffsetAt(ctx, e.pool, pid, *fromAt)
		if errors.Is(err, store.ErrPartitionGone) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		start = off - 1
	}
	err := store.CreateCursor(ctx, e.pool, pid, group, start, e.clock.Now())
	if errors.Is(err, store.ErrPartitionGone) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create cursor: %w", err)
	}
	return true, nil
}
