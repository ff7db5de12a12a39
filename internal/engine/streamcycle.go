package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/validate"
)

// StreamCycle is one cycle of a streaming query (Queen's /streams/v1/cycle):
// the caller's own writes (its state), pushes to sink queues and the ack of
// the source partition, committed in one PostgreSQL transaction or not at
// all.
type StreamCycle struct {
	// PartitionID is the source partition; Group the consumer group the
	// source messages were popped for.
	PartitionID uuid.UUID
	Group       string
	Push        []api.PushItem
	// Ack, when set, commits the source messages up to the one it names.
	Ack *api.StreamAck
	// Release ends the source lease with the ack; false keeps the messages
	// after the acked one leased until the lease expires.
	Release bool
	// Apply writes the caller's rows inside the cycle's transaction before
	// anything else; now is the cycle's clock reading. An error rolls the
	// whole cycle back and is returned as it is.
	Apply func(ctx context.Context, tx pgx.Tx, now time.Time) error
}

// StreamCycleResult is what a committed cycle did.
type StreamCycleResult struct {
	// Queue is the source partition's queue (nil when it does not exist).
	Queue  *string
	Pushed []api.PushResult
	Ack    *api.StreamAckResult
}

// CycleAborted is a cycle that rolled back for a reason the caller can act
// on (its ack cannot apply, a concurrent transaction conflicted): nothing
// was written.
type CycleAborted struct{ Reason string }

func (e CycleAborted) Error() string { return e.Reason }

// StreamCycle validates c and commits it: Apply, then the pushes (queues
// and partitions they need created inside the transaction, in name order,
// appended in partition id order, so concurrent cycles cannot deadlock),
// then the ack. Bad input
// is an invalid error before anything is written; a cycle that cannot
// apply answers CycleAborted.
func (e *Engine) StreamCycle(ctx context.Context, c StreamCycle, producerSub string) (*StreamCycleResult, error) {
	push, err := e.planCycle(ctx, c, producerSub)
	if err != nil {
		return nil, err
	}
	var run *txRun
	var out *StreamCycleResult
	err = pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		run, out = &txRun{}, &StreamCycleResult{Pushed: []api.PushResult{}}
		now := e.clock.Now()
		if c.Apply != nil {
			if err := c.Apply(ctx, tx, now); err != nil {
				return err
			}
		}
		if push != nil {
			if err := e.createTxPartitions(ctx, tx, []*txPush{push}, run); err != nil {
				return err
			}
			if out.Pushed, err = e.txAppend(ctx, tx, push, now, &run.fx, "push_items"); err != nil {
				return err
			}
		}
		return e.cycleSource(ctx, tx, c, out, &run.fx, now)
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001") {
		return nil, CycleAborted{"the cycle conflicted with a concurrent transaction and was rolled back; retry it"}
	}
	var aborted errTxAborted
	if errors.As(err, &aborted) {
		return nil, CycleAborted{aborted.reason}
	}
	if err != nil {
		return nil, err
	}
	for _, p := range run.created {
		e.catalog.remember(p.queue, p.partition, p.id)
	}
	e.fire(&run.fx)
	return out, nil
}

// planCycle checks the cycle's ack and encodes its pushes before anything
// is written, as a push does: payloads of encrypted sink queues sealed,
// producerSub stamped, the sink queues' maxSize held.
func (e *Engine) planCycle(ctx context.Context, c StreamCycle, producerSub string) (*txPush, error) {
	if err := validate.OptionalName("consumer_group", c.Group); err != nil {
		return nil, err
	}
	if err := checkCycleAck(c.Ack); err != nil {
		return nil, err
	}
	if len(c.Push) == 0 {
		return nil, nil
	}
	if err := e.validatePush(c.Push, true); err != nil {
		return nil, fmt.Errorf("push_items: %w", err)
	}
	queues, err := e.pushQueues(ctx, c.Push)
	if err != nil {
		return nil, err
	}
	prep, err := e.preparePush(ctx, c.Push, queues, producerSub)
	if err != nil {
		return nil, fmt.Errorf("push_items: %w", err)
	}
	if err := e.checkCapacity(ctx, queues, prep); err != nil {
		return nil, fmt.Errorf("push_items: %w", err)
	}
	reqs, idx := groupByPartition(prep)
	return &txPush{reqs: reqs, idx: idx, prep: prep, queues: queues}, nil
}

// checkCycleAck checks a cycle's ack, when it has one.
func checkCycleAck(a *api.StreamAck) error {
	if a != nil {
		if err := validate.RequiredID("ack.transactionId", a.TransactionID); err != nil {
			return err
		}
		if _, _, ok := ackOutcome(a.Status); !ok || a.Status == api.AckRetry {
			return invalidf("ack.status %q is not one of completed, success, failed, dlq", a.Status)
		}
		if a.LeaseID != "" {
			if _, err := uuid.Parse(a.LeaseID); err != nil {
				return invalidf("ack.leaseId %q is not a lease id (the leaseId of the popped messages)", a.LeaseID)
			}
		}
		if a.Count != nil && *a.Count < 0 {
			return invalidf("ack.count must not be negative, got %d", *a.Count)
		}
	}
	return nil
}
