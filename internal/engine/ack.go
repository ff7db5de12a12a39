package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/lease"
	"github.com/lethe-mq/lethe/internal/store"
)

// ackOutcome maps Queen's spellings of an ack status onto lethe's outcomes
// and the status the counters use.
func ackOutcome(s string) (lease.Outcome, string, bool) {
	switch s {
	case api.AckCompleted, api.AckSuccess, "":
		return lease.Completed, api.AckCompleted, true
	case api.AckFailed, api.AckRetry:
		return lease.Failed, api.AckFailed, true
	case api.AckDLQ:
		return lease.DLQ, api.AckDLQ, true
	}
	return 0, "", false
}

type ackItem struct {
	index int
	req   api.AckRequest
}

type ackKey struct {
	pid   uuid.UUID
	group string
}

// Ack applies acknowledgements. Problems with one ack (unknown partition,
// lease gone, unknown transaction, a partition whose stored state cannot be
// used) answer success=false for it, never an error; an error means the
// database failed.
func (e *Engine) Ack(ctx context.Context, acks []api.AckRequest, defaultGroup string) ([]api.AckResult, error) {
	results := make([]api.AckResult, len(acks))
	groups, order := groupAcks(acks, defaultGroup, results)
	for _, k := range order {
		var fx effects
		err := e.consumerTx(ctx, func(tx pgx.Tx) error {
			fx = effects{}
			return e.ackGroup(ctx, tx, k.pid, k.group, groups[k], results, &fx)
		})
		if err != nil && partitionFault(err) {
			failAckGroup(groups[k], results, err)
			fx = effects{}
			fx.partitionFailed(results[groups[k][0].index].QueueName, k.pid.String(), "ack", err)
		} else if err != nil {
			return nil, err
		}
		e.fire(&fx)
	}
	return results, nil
}

// groupAcks sorts acks by (partition, group), in first-seen order, and
// answers the malformed ones in results.
func groupAcks(acks []api.AckRequest, defaultGroup string, results []api.AckResult) (map[ackKey][]ackItem, []ackKey) {
	groups := map[ackKey][]ackItem{}
	var order []ackKey
	for i, a := range acks {
		results[i] = api.AckResult{Index: i, TransactionID: a.TransactionID}
		a.ConsumerGroup = cmpOr(a.ConsumerGroup, defaultGroup, api.QueueModeGroup)
		pid, err := uuid.Parse(a.PartitionID)
		if err != nil {
			results[i].Error = fmt.Sprintf("partitionId %q is not a partition id (a UUID from the popped message)", a.PartitionID)
			continue
		}
		if a.TransactionID == "" {
			results[i].Error = "transactionId is required"
			continue
		}
		k := ackKey{pid, a.ConsumerGroup}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], ackItem{i, a})
	}
	return groups, order
}

func cmpOr(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// failAckGroup answers every ack of a group whose transaction failed on the
// partition's stored state.
func failAckGroup(items []ackItem, results []api.AckResult, err error) {
	for _, it := range items {
		r := &results[it.index]
		*r = api.AckResult{Index: r.Index, TransactionID: r.TransactionID, QueueName: r.QueueName, PartitionName: r.PartitionName,
			Error: fmt.Sprintf("the partition's stored state could not be used, so nothing was acked (logged on the server): %v", err)}
	}
}

// ackGroup applies the acks of one group on one partition inside tx,
// holding the cursor row lock, and collects its counts in fx.
func (e *Engine) ackGroup(ctx context.Context, tx pgx.Tx, pid uuid.UUID, group string, items []ackItem, results []api.AckResult, fx *effects) error {
	row, target, err := e.lockCursorForAck(ctx, tx, pid, group)
	for _, it := range items {
		results[it.index].QueueName, results[it.index].PartitionName = target.queue, target.partition
	}
	if err != nil {
		return err
	}
	if row == nil {
		return answerNoCursor(ctx, tx, pid, group, items, results)
	}
	now := e.clock.Now()
	offsets := make([]int64, len(items))
	applied := make([]bool, len(items))
	for k, it := range items {
		if offsets[k], applied[k], err = e.ackOne(ctx, tx, row, it.req, &results[it.index], now); err != nil {
			return err
		}
	}
	if !anyTrue(applied) {
		return nil
	}
	if row.Lease.Held() && row.Lease.Complete() {
		dead := lease.Settle(&row.Cursor, target.policy, now)
		if err := e.writeDeadLetters(ctx, tx, row, now, dead); err != nil {
			return err
		}
		for k, it := range items {
			if applied[k] {
				results[it.index].LeaseReleased = true
				results[it.index].DLQ = results[it.index].DLQ || dead != nil && dead.Offset == offsets[k]
			}
		}
		target.release(fx, group, row.Committed)
	}
	countAcks(items, applied, target.queue, group, fx)
	return row.save(ctx, tx, now, false)
}

// ackOne applies one ack to the cursor. applied is false when it changed
// nothing (already done, or not applicable: res says why).
func (e *Engine) ackOne(ctx context.Context, tx pgx.Tx, row *cursorRow, req api.AckRequest, res *api.AckResult, now time.Time) (int64, bool, error) {
	outcome, _, ok := ackOutcome(req.Status)
	if !ok {
		res.Error = fmt.Sprintf("status %q is not one of completed, success, failed, retry, dlq", req.Status)
		return 0, false, nil
	}
	leaseID := uuid.Nil
	if req.LeaseID != "" {
		id, err := uuid.Parse(req.LeaseID)
		if err != nil {
			res.Error = fmt.Sprintf("leaseId %q is not a lease id (the leaseId of the popped message)", req.LeaseID)
			return 0, false, nil
		}
		leaseID = id
	}
	hash := store.TxnHash(req.TransactionID)
	off, dead, ok := lease.Ack(&row.Cursor, leaseID, hash, outcome, req.Error)
	if !ok {
		return 0, false, ackOutsideLease(ctx, tx, row, req, leaseID, res)
	}
	if dead != nil {
		if err := e.writeDeadLetter(ctx, tx, row, *dead, nil, now); err != nil {
			return 0, false, err
		}
		res.DLQ = true
	}
	res.Success = true
	return off, true, nil
}

// ackOutsideLease answers an ack the live lease does not hold: success when
// the transaction id resolves (store.TxnOffset) to a message the
// group is already done with; otherwise why it cannot apply. A hash purged
// past its window resolves as unknown: not acked, so the message is
// redelivered rather than lost.
func ackOutsideLease(ctx context.Context, tx pgx.Tx, row *cursorRow, req api.AckRequest, leaseID uuid.UUID, res *api.AckResult) error {
	off, found, err := store.TxnOffset(ctx, tx, row.pid, req.TransactionID)
	if err != nil {
		return err
	}
	switch {
	case found && row.IsDone(off):
		res.Success = true
	case lease.LeaseGone(&row.Cursor, leaseID):
		res.Error = fmt.Sprintf("lease %s is no longer held (it expired or was released); the message will be redelivered", req.LeaseID)
	default:
		res.Error = fmt.Sprintf("transaction %s is not leased to consumer group %q (unknown, expired, or past the deduplication window)",
			req.TransactionID, groupLabelOrQueue(row.group))
	}
	return nil
}

// answerNoCursor answers acks for a group without a cursor on pid, saying
// whether the partition itself is unknown.
func answerNoCursor(ctx context.Context, tx pgx.Tx, pid uuid.UUID, group string, items []ackItem, results []api.AckResult) error {
	exists, err := store.PartitionExists(ctx, tx, pid)
	if err != nil {
		return fmt.Errorf("ack: look up partition %s: %w", pid, err)
	}
	for _, it := range items {
		if exists {
			results[it.index].Error = fmt.Sprintf("consumer group %q has nothing delivered on partition %s", groupLabelOrQueue(group), pid)
		} else {
			results[it.index].Error = fmt.Sprintf("partition %s does not exist", pid)
		}
	}
	return nil
}

// countAcks counts the applied acks per outcome (completed, failed, dlq).
func countAcks(items []ackItem, applied []bool, queue, group string, fx *effects) {
	var counts [3]int
	statuses := [3]string{api.AckCompleted, api.AckFailed, api.AckDLQ}
	for k, it := range items {
		if applied[k] {
			o, _, _ := ackOutcome(it.req.Status)
			counts[o]++
		}
	}
	for o, n := range counts {
		if n > 0 {
			fx.acked(queue, group, statuses[o], n)
		}
	}
}

func anyTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}

func groupLabelOrQueue(group string) string {
	if group == api.QueueModeGroup {
		return "queue mode"
	}
	return group
}
