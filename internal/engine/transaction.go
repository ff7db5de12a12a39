package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/store"
)

// errTxAborted carries the reason a transaction rolled back to the caller.
type errTxAborted struct{ reason string }

func (e errTxAborted) Error() string { return e.reason }

// txPush is a validated push operation of a transaction.
type txPush struct {
	reqs   []*appendReq
	idx    [][]int
	prep   []prepared
	queues map[string]*Queue // by name; nil for a queue the push creates (pushHint)
}

// txRun is one transaction being applied: what it created and what it
// will tell others once committed.
type txRun struct {
	fx      effects
	created []createdPartition
	results []json.RawMessage
}

type createdPartition struct {
	queue, partition string
	id               uuid.UUID
}

// Transaction applies acks and pushes all together in one Postgres
// transaction, or none of them: a failed transaction writes nothing, not
// even the queues and partitions its pushes would have created. A failed
// step answers success=false with the reason; an error means the request
// was malformed or the database failed.
func (e *Engine) Transaction(ctx context.Context, req api.TransactionRequest, producerSub string) (*api.TransactionResponse, error) {
	pushes, err := e.planTransaction(ctx, req, producerSub)
	if err != nil {
		return nil, err
	}
	txID := uuid.NewString()
	var run *txRun
	err = pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		run = &txRun{results: make([]json.RawMessage, len(req.Operations))}
		if err := e.createTxPartitions(ctx, tx, pushes, run); err != nil {
			return err
		}
		for i, op := range req.Operations {
			if err := e.runOperation(ctx, tx, i, op, pushes[i], run); err != nil {
				return err
			}
		}
		return nil
	})
	if resp := abortedTransaction(txID, err); resp != nil {
		return resp, nil
	}
	if err != nil {
		return nil, err
	}
	for _, c := range run.created {
		e.catalog.remember(c.queue, c.partition, c.id)
	}
	e.fire(&run.fx)
	return &api.TransactionResponse{TransactionID: txID, Success: true, Results: run.results}, nil
}

// planTransaction validates and encodes every operation before anything is
// written; pushes[i] is operation i's push, if it is one. The pushes of all
// operations together must fit their queues' maxSize.
func (e *Engine) planTransaction(ctx context.Context, req api.TransactionRequest, producerSub string) ([]*txPush, error) {
	items, err := e.validateTransaction(req)
	if err != nil {
		return nil, err
	}
	queues, err := e.pushQueues(ctx, items)
	if err != nil {
		return nil, err
	}
	pushes := make([]*txPush, len(req.Operations))
	var all []prepared
	for i, op := range req.Operations {
		if op.Type != "push" {
			continue
		}
		prep, err := e.preparePush(ctx, op.Items, queues, producerSub)
		if err != nil {
			return nil, fmt.Errorf("operations[%d]: %w", i, err)
		}
		reqs, idx := groupByPartition(prep)
		pushes[i] = &txPush{reqs: reqs, idx: idx, prep: prep, queues: queues}
		all = append(all, prep...)
	}
	return pushes, e.checkCapacity(ctx, queues, all)
}

// validateTransaction checks every operation and returns the items of its
// pushes.
func (e *Engine) validateTransaction(req api.TransactionRequest) ([]api.PushItem, error) {
	if len(req.Operations) == 0 {
		return nil, invalidf("operations must hold at least one ack or push")
	}
	var items []api.PushItem
	for i, op := range req.Operations {
		switch op.Type {
		case "push":
			if err := e.validatePush(op.Items, true); err != nil {
				return nil, fmt.Errorf("operations[%d]: %w", i, err)
			}
			items = append(items, op.Items...)
			if len(items) > e.cfg.MaxItems {
				return nil, apierr.Field(apierr.Invalid, "operations", "the pushes of operations hold more than %d items together; "+
					"at most %d are accepted, as in one push", e.cfg.MaxItems, e.cfg.MaxItems)
			}
		case "ack":
			if err := checkTxAck(i, op); err != nil {
				return nil, err
			}
		default:
			return nil, invalidf("operations[%d].type must be \"ack\" or \"push\", got %q", i, op.Type)
		}
	}
	return items, nil
}

// checkTxAck checks an ack operation's ids.
func checkTxAck(i int, op api.Operation) error {
	if _, err := uuid.Parse(op.PartitionID); err != nil {
		return invalidf("operations[%d].partitionId %q is not a partition id", i, op.PartitionID)
	}
	if op.TransactionID == "" {
		return invalidf("operations[%d].transactionId is required", i)
	}
	return nil
}

// createTxPartitions finds or creates, inside tx, every partition the
// pushes write to, in name order so that concurrent transactions creating
// the same ones cannot deadlock, and records the ids on the requests.
func (e *Engine) createTxPartitions(ctx context.Context, tx pgx.Tx, pushes []*txPush, run *txRun) error {
	var all []*appendReq
	for _, p := range pushes {
		if p != nil {
			all = append(all, p.reqs...)
		}
	}
	slices.SortStableFunc(all, func(a, b *appendReq) int {
		return cmpStrings(a.queue, b.queue, a.partition, b.partition)
	})
	ids := map[partKey]uuid.UUID{}
	for _, r := range all {
		k := partKey{r.queue, r.partition}
		if _, ok := ids[k]; ok {
			continue
		}
		id, err := e.catalog.ensurePartitionIn(ctx, tx, r.queue, r.partition)
		if err != nil {
			return err
		}
		ids[k] = id
		run.created = append(run.created, createdPartition{r.queue, r.partition, id})
	}
	for _, r := range all {
		r.pid = ids[partKey{r.queue, r.partition}]
	}
	return nil
}

func cmpStrings(a1, b1, a2, b2 string) int {
	if c := strings.Compare(a1, b1); c != 0 {
		return c
	}
	return strings.Compare(a2, b2)
}

// runOperation applies operation i inside tx.
func (e *Engine) runOperation(ctx context.Context, tx pgx.Tx, i int, op api.Operation, push *txPush, run *txRun) error {
	if op.Type == "ack" {
		res, err := e.txAck(ctx, tx, op, &run.fx)
		if err != nil {
			return err
		}
		if !res.Success {
			return errTxAborted{fmt.Sprintf("operations[%d] (ack): %s", i, res.Error)}
		}
		run.results[i], _ = json.Marshal(res)
		return nil
	}
	out, err := e.txAppend(ctx, tx, push, e.clock.Now(), &run.fx, fmt.Sprintf("operations[%d] (push)", i))
	if err != nil {
		return err
	}
	run.results[i], _ = json.Marshal(out)
	return nil
}

// txAppend writes a push operation's segments inside tx at now, one per
// partition, pipelined in one round trip as a commit group is, and in the
// commit groups' lock order (partition id), so that a transaction or a
// stream cycle and a commit group crossing the same partitions cannot
// deadlock on their rows, and counts them on fx. A partition found deleted
// makes the catalog forget its queue and aborts the transaction, naming
// the operation what, with a message to retry.
func (e *Engine) txAppend(ctx context.Context, tx pgx.Tx, push *txPush, now time.Time, fx *effects, what string) ([]api.PushResult, error) {
	out := make([]api.PushResult, len(push.prep))
	errs := make([]error, len(push.reqs))
	order := make([]int, len(push.reqs))
	for j := range order {
		order[j] = j
	}
	slices.SortFunc(order, func(a, b int) int { return store.LockOrder(push.reqs[a].pid, push.reqs[b].pid) })
	batch := &pgx.Batch{}
	for _, j := range order {
		r := push.reqs[j]
		store.QueueAppend(batch, r.pid, segmentOf([]*appendReq{r}), now, func(res []store.Appended, err error) {
			errs[j] = err
			if err == nil {
				fillPushResults(out, push.prep, push.idx[j], r.pid, res)
			}
		})
	}
	closeErr := tx.SendBatch(ctx, batch).Close()
	for j, err := range errs {
		if errors.Is(err, store.ErrPartitionGone) {
			e.catalog.forgetQueue(push.reqs[j].queue)
			return nil, errTxAborted{fmt.Sprintf("%s: queue %s was deleted meanwhile; retry", what, push.reqs[j].queue)}
		}
		if err != nil {
			return nil, err
		}
	}
	if closeErr != nil {
		return nil, closeErr
	}
	for _, r := range push.reqs {
		fx.pushed(r.queue, len(r.msgs), pushHint(push.queues[r.queue], r.pid, r.partition))
	}
	fillClaimed(out, push.prep)
	return out, nil
}

// txAck applies one ack operation with the same code as Ack.
func (e *Engine) txAck(ctx context.Context, tx pgx.Tx, op api.Operation, fx *effects) (api.AckResult, error) {
	pid, _ := uuid.Parse(op.PartitionID)
	group := cmpOr(op.ConsumerGroup, api.QueueModeGroup)
	res := []api.AckResult{{TransactionID: op.TransactionID}}
	item := ackItem{0, api.AckRequest{TransactionID: op.TransactionID, PartitionID: op.PartitionID,
		LeaseID: op.LeaseID, Status: op.Status, ConsumerGroup: group, Error: op.Error}}
	err := e.ackGroup(ctx, tx, pid, group, []ackItem{item}, res, fx)
	return res[0], err
}

// abortedTransaction answers a transaction that rolled back for a reason
// the caller can act on (a step failed, a concurrent transaction
// conflicted), or nil.
func abortedTransaction(txID string, err error) *api.TransactionResponse {
	var aborted errTxAborted
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &aborted):
		return &api.TransactionResponse{TransactionID: txID, Success: false, Error: aborted.reason, Results: []json.RawMessage{}}
	case errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001"):
		return &api.TransactionResponse{TransactionID: txID, Success: false,
			Error: "transaction conflicted with a concurrent one and was rolled back; retry it", Results: []json.RawMessage{}}
	}
	return nil
}

// ExtendLease pushes a lease's expiry to now + seconds (the queue's
// leaseTime when seconds is 0). A pop that claimed several partitions
// leased them all under one id: every one of them is extended, and the
// answer is the earliest new expiry. The lease id names its queue
// (leaseid.go), so the cursors are found through that queue's partitions;
// an id of another layout is looked for among all cursors.
func (e *Engine) ExtendLease(ctx context.Context, leaseID string, seconds int) (time.Time, error) {
	id, err := uuid.Parse(leaseID)
	if err != nil {
		return time.Time{}, invalidf("lease id %q is not a UUID", leaseID)
	}
	if seconds < 0 || seconds > 7*24*3600 {
		return time.Time{}, invalidf("seconds must be between 0 and %d", 7*24*3600)
	}
	now := e.clock.Now()
	var until *time.Time
	if qid, ok := leaseQueue(id); ok {
		until, err = store.ExtendQueueLease(ctx, e.pool, id, now, seconds, qid)
	} else {
		until, err = store.ExtendLease(ctx, e.pool, id, now, seconds)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("extend lease %s: %w", leaseID, err)
	}
	if until == nil {
		return time.Time{}, notFoundf("lease %s is not held (acked, released, or taken over after expiring)", leaseID)
	}
	return *until, nil
}
