package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/api"
)

// normalizeAckStatus maps Queen's spellings onto lethe's outcomes.
func normalizeAckStatus(s string) (string, bool) {
	switch s {
	case api.AckCompleted, api.AckSuccess, "":
		return api.AckCompleted, true
	case api.AckFailed, api.AckRetry:
		return api.AckFailed, true
	case api.AckDLQ:
		return api.AckDLQ, true
	}
	return "", false
}

type ackItem struct {
	index int
	req   api.AckRequest
}

// Ack applies acknowledgements. Problems with one ack (unknown partition,
// lease gone, unknown transaction) answer success=false for it, never an
// error; an error means the database failed.
func (e *Engine) Ack(ctx context.Context, acks []api.AckRequest, defaultGroup string) ([]api.AckResult, error) {
	results := make([]api.AckResult, len(acks))
	type key struct {
		pid   uuid.UUID
		group string
	}
	groups := map[key][]ackItem{}
	var order []key
	for i, a := range acks {
		results[i] = api.AckResult{Index: i, TransactionID: a.TransactionID}
		if a.ConsumerGroup == "" {
			a.ConsumerGroup = defaultGroup
		}
		if a.ConsumerGroup == "" {
			a.ConsumerGroup = api.QueueModeGroup
		}
		pid, err := uuid.Parse(a.PartitionID)
		if err != nil {
			results[i].Error = fmt.Sprintf("partitionId %q is not a partition id (a UUID from the popped message)", a.PartitionID)
			continue
		}
		if a.TransactionID == "" {
			results[i].Error = "transactionId is required"
			continue
		}
		k := key{pid, a.ConsumerGroup}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], ackItem{i, a})
	}
	for _, k := range order {
		err := e.consumerTx(ctx, func(tx pgx.Tx) error {
			return e.ackGroup(ctx, tx, k.pid, k.group, groups[k], results)
		})
		if err != nil {
			return nil, err
		}
	}
	return results, nil
}

// ackGroup applies the acks of one group on one partition inside tx, holding
// the cursor row lock.
func (e *Engine) ackGroup(ctx context.Context, tx pgx.Tx, pid uuid.UUID, group string, items []ackItem, results []api.AckResult) error {
	// One round trip locks the cursor and reads what settling needs.
	var queueName, partName string
	var q Queue
	var retryDelayMs int
	c := &cursor{}
	err := tx.QueryRow(ctx, `SELECT `+cursorColumns("c.")+`, q.name, p.name, q.retry_limit, q.retry_delay_ms
		  FROM lethe.cursors c
		  JOIN lethe.partitions p ON p.id = c.partition_id
		  JOIN lethe.queues q ON q.id = p.queue_id
		 WHERE c.partition_id = $1 AND c.group_name = $2
		   FOR UPDATE OF c`, pid, group).
		Scan(c.fields(&queueName, &partName, &q.RetryLimit, &retryDelayMs)...)
	q.RetryDelay = time.Duration(retryDelayMs) * time.Millisecond
	if errors.Is(err, pgx.ErrNoRows) {
		// No cursor: say whether the partition itself is unknown.
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM lethe.partitions WHERE id = $1)`, pid).Scan(&exists); err != nil {
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
	if err != nil {
		return fmt.Errorf("ack: lock cursor %s/%s: %w", pid, group, err)
	}
	for _, it := range items {
		results[it.index].QueueName, results[it.index].PartitionName = queueName, partName
	}
	now := e.clock.Now()
	leaseIDStr := ""
	if c.leased() {
		leaseIDStr = c.leaseID.String()
	}
	changed := false
	for _, it := range items {
		res := &results[it.index]
		status, ok := normalizeAckStatus(it.req.Status)
		if !ok {
			res.Error = fmt.Sprintf("status %q is not one of completed, success, failed, retry, dlq", it.req.Status)
			continue
		}
		idx := -1
		if c.leased() && (it.req.LeaseID == "" || it.req.LeaseID == leaseIDStr) {
			idx = slices.Index(c.leaseTxns, it.req.TransactionID)
		}
		if idx < 0 {
			// Not in the live lease: done already, or lost with its lease.
			done, err := e.alreadyDone(ctx, tx, c, it.req.TransactionID)
			if err != nil {
				return err
			}
			if done {
				res.Success = true
				continue
			}
			if it.req.LeaseID != "" && it.req.LeaseID != leaseIDStr {
				res.Error = fmt.Sprintf("lease %s is no longer held (it expired or was released); the message will be redelivered", it.req.LeaseID)
			} else {
				res.Error = fmt.Sprintf("transaction %s is not leased to consumer group %q (unknown, expired, or past the deduplication window)",
					it.req.TransactionID, groupLabelOrQueue(group))
			}
			continue
		}
		off := c.leaseFrom + int64(idx)
		switch status {
		case api.AckCompleted:
			c.leaseDone = appendUnique(c.leaseDone, off)
		case api.AckFailed:
			c.leaseFail = appendUnique(c.leaseFail, off)
			if it.req.Error != "" {
				c.leaseError = it.req.Error
			}
		case api.AckDLQ:
			if err := e.deadLetter(ctx, tx, c, off, it.req.Error, c.retryCount, now); err != nil {
				return err
			}
			c.leaseDone = appendUnique(c.leaseDone, off)
			res.DLQ = true
		}
		res.Success = true
		changed = true
	}
	if !changed {
		return nil
	}
	if c.outcomeCount() >= c.leaseSize() {
		dead, err := e.settle(ctx, tx, c, &q, now, now)
		if err != nil {
			return err
		}
		for _, it := range items {
			if results[it.index].Success {
				results[it.index].LeaseReleased = true
				if dead && isFailed(it.req.Status) {
					results[it.index].DLQ = true
				}
			}
		}
	}
	if e.cfg.Hooks.Acked != nil {
		// One call per outcome (completed, failed, dlq) of the acks applied.
		counts := map[string]int{}
		for _, it := range items {
			if results[it.index].Success {
				st, _ := normalizeAckStatus(it.req.Status)
				counts[st]++
			}
		}
		for st, n := range counts {
			e.cfg.Hooks.Acked(queueName, group, st, n)
		}
	}
	return c.save(ctx, tx, now, false)
}

func isFailed(s string) bool { st, _ := normalizeAckStatus(s); return st == api.AckFailed }

func groupLabelOrQueue(group string) string {
	if group == api.QueueModeGroup {
		return "queue mode"
	}
	return group
}

// alreadyDone tells whether txnID resolves, through the hash sidecar, to an
// offset the group has already moved past. A hash purged past its window
// resolves as unknown: not acked, so the message is redelivered rather than
// lost.
func (e *Engine) alreadyDone(ctx context.Context, tx pgx.Tx, c *cursor, txnID string) (bool, error) {
	off, found, err := txnOffset(ctx, tx, c.pid, txnID)
	if err != nil || !found {
		return false, err
	}
	return off <= c.committed, nil
}

func appendUnique(s []int64, v int64) []int64 {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// txnOffset resolves a transaction id to the offset it was stored at in
// partition pid, through the hash sidecar. found is false when it was never
// stored or its hash was purged past the window.
func txnOffset(ctx context.Context, q querier, pid uuid.UUID, txnID string) (offset int64, found bool, err error) {
	rows, err := q.Query(ctx, `SELECT lethe.txn_offset($1, $2)`, pid, txnHash(txnID))
	if err != nil {
		return 0, false, fmt.Errorf("resolve transaction %s: %w", txnID, err)
	}
	defer rows.Close()
	var off *int64
	for rows.Next() {
		if err := rows.Scan(&off); err != nil {
			return 0, false, fmt.Errorf("resolve transaction %s: %w", txnID, err)
		}
	}
	if err := rows.Err(); err != nil {
		return 0, false, fmt.Errorf("resolve transaction %s: %w", txnID, err)
	}
	if off == nil {
		return 0, false, nil
	}
	return *off, true, nil
}
