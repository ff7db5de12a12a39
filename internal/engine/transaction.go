package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-mq/lethe/api"
)

// errTxAborted carries the reason a transaction rolled back to the caller.
type errTxAborted struct{ reason string }

func (e errTxAborted) Error() string { return e.reason }

// Transaction applies acks and pushes all together in one Postgres
// transaction, or none of them. A failed step answers success=false with the
// reason; an error means the request was malformed or the database failed.
func (e *Engine) Transaction(ctx context.Context, req api.TransactionRequest, producerSub string) (*api.TransactionResponse, error) {
	if len(req.Operations) == 0 {
		return nil, invalidf("operations must hold at least one ack or push")
	}
	// Validate and encode everything before touching the database.
	type pushOp struct {
		reqs []*appendReq
		idx  [][]int
		prep []prepared
	}
	pushes := make([]*pushOp, len(req.Operations))
	for i, op := range req.Operations {
		switch op.Type {
		case "push":
			prep, err := e.preparePush(op.Items, producerSub, true)
			if err != nil {
				return nil, fmt.Errorf("operations[%d]: %w", i, err)
			}
			reqs, idx := groupByPartition(prep)
			pushes[i] = &pushOp{reqs: reqs, idx: idx, prep: prep}
		case "ack":
			if _, err := uuid.Parse(op.PartitionID); err != nil {
				return nil, invalidf("operations[%d].partitionId %q is not a partition id", i, op.PartitionID)
			}
			if op.TransactionID == "" {
				return nil, invalidf("operations[%d].transactionId is required", i)
			}
		default:
			return nil, invalidf("operations[%d].type must be \"ack\" or \"push\", got %q", i, op.Type)
		}
	}
	// Partitions are created once everything validated, outside the
	// transaction: an empty partition row is harmless if it rolls back.
	for _, p := range pushes {
		if p == nil {
			continue
		}
		for _, r := range p.reqs {
			if _, err := e.catalog.ensurePartition(ctx, r.queue, r.partition); err != nil {
				return nil, err
			}
		}
	}
	resp := &api.TransactionResponse{TransactionID: uuid.NewString(), Success: true}
	results := make([]json.RawMessage, len(req.Operations))
	var touched []string
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		for i, op := range req.Operations {
			if op.Type == "ack" {
				pid, _ := uuid.Parse(op.PartitionID)
				group := op.ConsumerGroup
				if group == "" {
					group = api.QueueModeGroup
				}
				ackRes := make([]api.AckResult, 1)
				ackRes[0] = api.AckResult{TransactionID: op.TransactionID}
				item := ackItem{0, api.AckRequest{TransactionID: op.TransactionID, PartitionID: op.PartitionID,
					LeaseID: op.LeaseID, Status: op.Status, ConsumerGroup: group, Error: op.Error}}
				if err := e.ackGroup(ctx, tx, pid, group, []ackItem{item}, ackRes); err != nil {
					return err
				}
				if !ackRes[0].Success {
					return errTxAborted{fmt.Sprintf("operations[%d] (ack): %s", i, ackRes[0].Error)}
				}
				results[i], _ = json.Marshal(ackRes[0])
				continue
			}
			p := pushes[i]
			out := make([]api.PushResult, len(p.prep))
			for j, r := range p.reqs {
				pid, err := e.catalog.ensurePartition(ctx, r.queue, r.partition)
				if err != nil {
					return err
				}
				if err := e.writeSegment(ctx, tx, pid, []*appendReq{r}); err != nil {
					if errors.Is(err, errPartitionGone) {
						e.catalog.forgetQueue(r.queue)
						return errTxAborted{fmt.Sprintf("operations[%d] (push): queue %s was deleted meanwhile; retry", i, r.queue)}
					}
					return err
				}
				touched = append(touched, r.queue)
				for k, at := range p.idx[j] {
					res := r.results[k]
					status := api.StatusQueued
					if res.duplicate {
						status = api.StatusDuplicate
					}
					it := p.prep[at].item
					out[at] = api.PushResult{Index: at, TransactionID: it.TransactionID, TransactionIDCamel: it.TransactionID,
						Status: status, MessageID: MessageID(pid, res.offset), PartitionID: pid.String(),
						TraceID: it.TraceID, QueueName: it.Queue}
				}
			}
			results[i], _ = json.Marshal(out)
		}
		return nil
	})
	var aborted errTxAborted
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &aborted):
		return &api.TransactionResponse{TransactionID: resp.TransactionID, Success: false, Error: aborted.reason, Results: []json.RawMessage{}}, nil
	case errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001"):
		return &api.TransactionResponse{TransactionID: resp.TransactionID, Success: false,
			Error: "transaction conflicted with a concurrent one and was rolled back; retry it", Results: []json.RawMessage{}}, nil
	case err != nil:
		return nil, err
	}
	for _, q := range touched {
		e.notifier.notify(q)
	}
	resp.Results = results
	return resp, nil
}

// ExtendLease pushes a lease's expiry to now + seconds (the queue's
// leaseTime when seconds is 0).
func (e *Engine) ExtendLease(ctx context.Context, leaseID string, seconds int) (time.Time, error) {
	id, err := uuid.Parse(leaseID)
	if err != nil {
		return time.Time{}, invalidf("lease id %q is not a UUID", leaseID)
	}
	if seconds < 0 || seconds > 7*24*3600 {
		return time.Time{}, invalidf("seconds must be between 0 and %d", 7*24*3600)
	}
	now := e.clock.Now()
	var until time.Time
	err = e.pool.QueryRow(ctx, `
		UPDATE lethe.cursors c
		   SET lease_until = $2::timestamptz + make_interval(secs => CASE WHEN $3 > 0 THEN $3 ELSE q.lease_time END),
		       updated_at = $2
		  FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
		 WHERE c.lease_id = $1 AND p.id = c.partition_id
		RETURNING c.lease_until`, id, now, seconds).Scan(&until)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, notFoundf("lease %s is not held (acked, released, or taken over after expiring)", leaseID)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("extend lease %s: %w", leaseID, err)
	}
	return until, nil
}
