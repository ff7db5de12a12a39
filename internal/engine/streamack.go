package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/lease"
	"github.com/lethe-mq/lethe/internal/store"
)

// cycleSource applies a cycle's ack, if any, and names the source queue in
// out.
func (e *Engine) cycleSource(ctx context.Context, tx pgx.Tx, c StreamCycle, out *StreamCycleResult, fx *effects, now time.Time) error {
	group := cmpOr(c.Group, api.QueueModeGroup)
	if c.Ack == nil {
		return sourceQueue(ctx, tx, c.PartitionID, out)
	}
	row, target, err := e.lockCursorForAck(ctx, tx, c.PartitionID, group)
	if err != nil {
		return err
	}
	if row == nil {
		if err := sourceQueue(ctx, tx, c.PartitionID, out); err != nil {
			return err
		}
		if out.Queue == nil {
			return errTxAborted{fmt.Sprintf("partition %s does not exist", c.PartitionID)}
		}
		return errTxAborted{fmt.Sprintf("consumer group %q has nothing delivered on partition %s", groupLabelOrQueue(group), c.PartitionID)}
	}
	out.Queue = &target.queue
	res, err := e.cycleAck(ctx, tx, row, c, now)
	if err != nil {
		return err
	}
	out.Ack = res.result
	if res.acked > 0 {
		fx.acked(target.queue, group, res.status, res.acked)
	}
	if !row.Lease.Held() {
		target.release(fx, group, row.Committed) // as an ack's release does
	}
	return row.save(ctx, tx, now, false)
}

type cycleAckDone struct {
	result *api.StreamAckResult
	status string
	acked  int
}

// cycleAck commits the source messages through the one the ack names, which
// must be in the group's live lease (the lease the ack names, when it names
// one): completed moves the cursor to it; failed or dlq dead-letters it and
// moves the cursor to it. Either way the messages before it are done.
func (e *Engine) cycleAck(ctx context.Context, tx pgx.Tx, row *cursorRow, c StreamCycle, now time.Time) (cycleAckDone, error) {
	a := c.Ack
	outcome, status, _ := ackOutcome(a.Status)
	leaseID := uuid.Nil
	if a.LeaseID != "" {
		leaseID, _ = uuid.Parse(a.LeaseID)
	}
	if row.Lease.Held() && !row.Lease.Until.After(now) {
		return cycleAckDone{}, errTxAborted{fmt.Sprintf("the lease on partition %s expired; its messages will be delivered again", row.pid)}
	}
	offset, ok := lease.Leased(&row.Cursor, leaseID, store.TxnHash(a.TransactionID))
	if !ok {
		return cycleAckDone{}, errTxAborted{notLeased(row, a)}
	}
	release := c.Release || outcome != lease.Completed
	done := cycleAckDone{status: status, result: &api.StreamAckResult{Success: true, Count: 1, LeaseReleased: release}}
	if a.Count != nil {
		done.result.Count = *a.Count
	}
	if outcome != lease.Completed {
		reason := cmpOr(a.Error, "streaming cycle reported failure")
		d := lease.DeadLetter{Offset: offset, Reason: reason, Retries: row.RetriesOf(offset)}
		if err := e.writeDeadLetter(ctx, tx, row, d, nil, now); err != nil {
			return cycleAckDone{}, err
		}
		done.result.DLQ = true
	}
	done.acked = lease.CommitThrough(&row.Cursor, offset, release)
	return done, nil
}

// notLeased says why an ack's message is not in the group's live lease.
func notLeased(row *cursorRow, a *api.StreamAck) string {
	switch {
	case !row.Lease.Held():
		return fmt.Sprintf("consumer group %q holds no lease on partition %s (it was acked, released or expired); nothing was written",
			groupLabelOrQueue(row.group), row.pid)
	case a.LeaseID != "" && a.LeaseID != row.Lease.ID.String():
		return fmt.Sprintf("lease %s is no longer held (it expired or was released); nothing was written", a.LeaseID)
	}
	return fmt.Sprintf("transaction %s is not in the live lease of consumer group %q on partition %s; nothing was written",
		a.TransactionID, groupLabelOrQueue(row.group), row.pid)
}

// sourceQueue names the queue of partition pid in out, nil when there is
// no such partition.
func sourceQueue(ctx context.Context, tx pgx.Tx, pid uuid.UUID, out *StreamCycleResult) error {
	name, err := store.PartitionQueue(ctx, tx, pid)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cycle: look up partition %s: %w", pid, err)
	}
	out.Queue = &name
	return nil
}
