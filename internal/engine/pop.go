package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-mq/lethe/api"
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
	SubscriptionMode string
	SubscriptionFrom string
	MaxPartitions    int
	// Namespace and Task select queues when Queue is empty (GET /api/v1/pop).
	Namespace string
	Task      string
}

// Validate checks bounds and fills defaults.
func (r *PopRequest) Validate() error {
	if r.Queue == "" && (r.Namespace != "" || r.Task != "") {
		// Popping by namespace/task: queues are found at pop time.
	} else if err := ValidateName("queue", r.Queue); err != nil {
		return err
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
	switch r.SubscriptionMode {
	case "", SubscriptionAll, SubscriptionNew:
	default:
		return invalidf("subscriptionMode must be %q or %q, got %q", SubscriptionAll, SubscriptionNew, r.SubscriptionMode)
	}
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
	deadline := time.Now().Add(req.Timeout)
	for {
		queues := []string{req.Queue}
		if req.Queue == "" {
			var err error
			if queues, err = e.queuesOf(ctx, req.Namespace, req.Task); err != nil {
				return nil, err
			}
		}
		var wake <-chan struct{}
		cancel := func() {}
		if req.Wait {
			wake, cancel = e.notifier.subscribe(req.Group, queues...)
		}
		resp, err := e.popQueues(ctx, req, queues)
		if err != nil || len(resp.Messages) > 0 || !req.Wait {
			cancel()
			return resp, err
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			cancel()
			return resp, nil
		}
		t := time.NewTimer(min(remaining, repollInterval))
		select {
		case <-wake:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			cancel()
			return resp, nil
		}
		t.Stop()
		cancel()
	}
}

// popQueues pops from the first of queues that has messages.
func (e *Engine) popQueues(ctx context.Context, req PopRequest, queues []string) (*api.PopResponse, error) {
	var resp *api.PopResponse
	for _, name := range queues {
		r := req
		r.Queue = name
		var err error
		if resp, err = e.popOnce(ctx, r); err != nil || len(resp.Messages) > 0 {
			return resp, err
		}
	}
	if resp == nil {
		resp = &api.PopResponse{Success: true, ConsumerGroup: groupLabel(req.Group), Messages: []api.Message{}}
	}
	return resp, nil
}

// queuesOf lists the queues of a namespace and/or task.
func (e *Engine) queuesOf(ctx context.Context, namespace, task string) ([]string, error) {
	rows, err := e.pool.Query(ctx, `
		SELECT name FROM lethe.queues
		 WHERE ($1 = '' OR namespace = $1) AND ($2 = '' OR task = $2)
		 ORDER BY name LIMIT 1000`, namespace, task)
	if err != nil {
		return nil, fmt.Errorf("list queues of namespace %q task %q: %w", namespace, task, err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

type candidate struct {
	pid  uuid.UUID
	name string
	// hasCursor is known when the candidate came from the candidates query:
	// then ensureCursor's round trip is skipped.
	hasCursor bool
}

func (e *Engine) popOnce(ctx context.Context, req PopRequest) (*api.PopResponse, error) {
	resp := &api.PopResponse{Success: true, Queue: req.Queue, ConsumerGroup: groupLabel(req.Group), Messages: []api.Message{}}
	q, err := e.catalog.queue(ctx, req.Queue)
	if err != nil || q == nil {
		return resp, err
	}
	now := e.clock.Now()
	fromAt, err := e.subscription(ctx, q, req.Group, req.SubscriptionMode, req.SubscriptionFrom, now)
	if err != nil {
		return nil, err
	}
	var cands []candidate
	if req.Partition != "" {
		pid, ok, err := e.catalog.partitionID(ctx, q, req.Partition)
		if err != nil || !ok {
			return resp, err
		}
		cands = []candidate{{pid: pid, name: req.Partition}}
	} else {
		cands, err = e.candidates(ctx, q, req.Group, fromAt, now, req.MaxPartitions*4)
		if err != nil {
			return nil, err
		}
	}
	for _, c := range cands {
		if resp.PartitionsClaimed >= req.MaxPartitions {
			break
		}
		msgs, leaseID, err := e.claim(ctx, q, c, req, fromAt, now)
		if err != nil {
			return nil, err
		}
		if len(msgs) == 0 {
			continue
		}
		if resp.PartitionsClaimed == 0 {
			resp.Partition, resp.PartitionID, resp.LeaseID = c.name, c.pid.String(), leaseID
		}
		resp.PartitionsClaimed++
		resp.Messages = append(resp.Messages, msgs...)
	}
	if e.cfg.Hooks.Delivered != nil && len(resp.Messages) > 0 {
		e.cfg.Hooks.Delivered(q.Name, req.Group, len(resp.Messages))
	}
	return resp, nil
}

func groupLabel(group string) string {
	if group == api.QueueModeGroup {
		return ""
	}
	return group
}

// candidates lists partitions of q that may have work for group: messages
// past its cursor and no live lease. The least recently popped come first so
// partitions share the consumers fairly.
func (e *Engine) candidates(ctx context.Context, q *Queue, group string, fromAt *time.Time, now time.Time, limit int) ([]candidate, error) {
	rows, err := e.pool.Query(ctx, `
		SELECT p.id, p.name, c.partition_id IS NOT NULL
		  FROM lethe.partitions p
		  LEFT JOIN lethe.cursors c ON c.partition_id = p.id AND c.group_name = $2
		 WHERE p.queue_id = $1
		   AND p.next_offset > greatest(coalesce(c.committed + 1, 0), p.low_watermark)
		   AND (c.lease_id IS NULL OR c.lease_until <= $3)
		   AND (c.retry_after IS NULL OR c.retry_after <= $3)
		   AND ($4::timestamptz IS NULL OR c.partition_id IS NOT NULL OR p.last_push_at >= $4)
		   AND ($5 = 0 OR p.last_push_at <= $3 - make_interval(secs => $5))
		   -- With delayedProcessing, the segment holding the next offset must
		   -- have begun before the visibility cutoff.
		   AND ($7 = 0 OR coalesce((SELECT s.first_at FROM lethe.segments s
		                    WHERE s.partition_id = p.id
		                      AND s.base_offset <= greatest(coalesce(c.committed + 1, 0), p.low_watermark)
		                    ORDER BY s.base_offset DESC LIMIT 1), '-infinity') <= $3 - make_interval(secs => $7))
		 ORDER BY c.last_pop_at NULLS FIRST
		 LIMIT $6`, q.ID, group, now, fromAt, q.WindowBuffer, limit, q.DelayedProcessing)
	if err != nil {
		return nil, fmt.Errorf("find partitions of %s with work: %w", q.Name, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (candidate, error) {
		var c candidate
		err := r.Scan(&c.pid, &c.name, &c.hasCursor)
		return c, err
	})
}

// claim leases the next messages of one partition to the group, or answers
// none when another consumer holds it or nothing is visible yet.
func (e *Engine) claim(ctx context.Context, q *Queue, cand candidate, req PopRequest, fromAt *time.Time, now time.Time) ([]api.Message, string, error) {
	if cand.hasCursor {
		// Listed with its cursor a moment ago; lockCursorForPop copes if it vanished.
	} else if err := e.ensureCursor(ctx, cand.pid, req.Group, fromAt); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23503" {
			// The partition was cleaned up after we listed it: nothing to
			// deliver, and the cached id is stale.
			e.catalog.forgetPartition(q.Name, cand.name)
			return nil, "", nil
		}
		return nil, "", err
	}
	var msgs []api.Message
	var leaseID string
	err := e.consumerTx(ctx, func(tx pgx.Tx) error {
		c, ps, err := lockCursorForPop(ctx, tx, cand.pid, req.Group)
		if err != nil || c == nil {
			return err
		}
		dirty := false
		if c.leased() {
			if c.leaseUntil.After(now) {
				return nil
			}
			if err := e.expireLease(ctx, tx, c, q, now); err != nil {
				return err
			}
			dirty = true
		}
		next, low, lastPush := ps.next, ps.low, ps.lastPush
		start := max(c.committed+1, low)
		if c.retryAfter != nil && c.retryAfter.After(now) {
			// A failed message waits out the queue's retryDelay.
			return c.saveIf(ctx, tx, now, dirty)
		}
		windowOpen := q.WindowBuffer > 0 && lastPush != nil && lastPush.After(now.Add(-time.Duration(q.WindowBuffer)*time.Second))
		var frames []storedFrame
		if start < next && !windowOpen {
			visible := now.Add(-time.Duration(q.DelayedProcessing) * time.Second)
			frames, err = readFrames(ctx, tx, cand.pid, start, req.Batch+len(c.ackedAhead), visible)
			if err != nil {
				return err
			}
			// Skip what the group completed ahead of a failed message; the
			// lease range below counts those offsets as done.
			if len(c.ackedAhead) > 0 {
				frames = slices.DeleteFunc(frames, func(f storedFrame) bool { return c.isAckedAhead(f.offset) })
			}
			if len(frames) > req.Batch {
				frames = frames[:req.Batch]
			}
		}
		if len(frames) == 0 {
			// Marking the empty claim as a pop rotates the candidates, so
			// partitions whose messages are not visible yet cannot crowd
			// out one that is ready.
			return c.saveIf(ctx, tx, now, dirty || q.DelayedProcessing > 0)
		}
		last := frames[len(frames)-1].offset
		if req.AutoAck {
			c.advance(last)
		} else {
			id := uuid.New()
			c.leaseID = &id
			c.leaseFrom, c.leaseTo = start, last
			c.leaseUntil = now.Add(time.Duration(q.LeaseTime) * time.Second)
			c.leaseTxns = make([]string, last-start+1)
			c.leaseDone, c.leaseFail, c.leaseError = nil, nil, ""
			leaseID = id.String()
			// Offsets retention removed inside the range stay empty and
			// count as done.
			for o := start; o <= last; o++ {
				c.leaseDone = append(c.leaseDone, o)
			}
			for _, f := range frames {
				c.leaseTxns[f.offset-start] = f.TxnID
				c.leaseDone = removeValue(c.leaseDone, f.offset)
			}
		}
		if err := c.save(ctx, tx, now, true); err != nil {
			return err
		}
		msgs = make([]api.Message, len(frames))
		for i, f := range frames {
			retries := 0
			if c.retryOffset != nil && *c.retryOffset == f.offset {
				retries = c.retryCount
			}
			msgs[i] = api.Message{
				ID:            MessageID(cand.pid, f.offset),
				TransactionID: f.TxnID,
				TraceID:       f.TraceID,
				Data:          f.Payload,
				ProducerSub:   f.ProducerSub,
				CreatedAt:     f.CreatedAt.Format(time.RFC3339Nano),
				Queue:         q.Name,
				Partition:     cand.name,
				PartitionID:   cand.pid.String(),
				LeaseID:       leaseID,
				ConsumerGroup: groupLabel(req.Group),
				RetryCount:    retries,
				Offset:        f.offset,
			}
		}
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("pop %s/%s: %w", q.Name, cand.name, err)
	}
	return msgs, leaseID, nil
}

func removeValue(s []int64, v int64) []int64 {
	for i, x := range s {
		if x == v {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}

// ensureCursor creates the group's cursor on pid where its subscription
// says it starts.
func (e *Engine) ensureCursor(ctx context.Context, pid uuid.UUID, group string, fromAt *time.Time) error {
	start := int64(-1)
	if fromAt == nil {
		// Starting at the oldest message needs no lookup: one round trip.
		_, err := e.pool.Exec(ctx, `
			INSERT INTO lethe.cursors (partition_id, group_name, committed, updated_at)
			VALUES ($1, $2, -1, $3) ON CONFLICT DO NOTHING`, pid, group, e.clock.Now())
		if err != nil {
			return fmt.Errorf("create cursor: %w", err)
		}
		return nil
	}
	var exists bool
	if err := e.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM lethe.cursors WHERE partition_id = $1 AND group_name = $2)`,
		pid, group).Scan(&exists); err != nil {
		return fmt.Errorf("look up cursor: %w", err)
	}
	if exists {
		return nil
	}
	if fromAt != nil {
		off, err := offsetAt(ctx, e.pool, pid, *fromAt)
		if err != nil {
			return err
		}
		start = off - 1
	}
	_, err := e.pool.Exec(ctx, `
		INSERT INTO lethe.cursors (partition_id, group_name, committed, updated_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, pid, group, start, e.clock.Now())
	if err != nil {
		return fmt.Errorf("create cursor: %w", err)
	}
	return nil
}
