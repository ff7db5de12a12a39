package streams

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/validate"
)

// cycleLockClass is the first key of the transaction advisory lock that
// serializes cycles of one (query, partition): a flush cycle (no ack, so
// no cursor lock) and a regular one of the same partition take turns.
const cycleLockClass = 737010

// Cycle commits one cycle of a streaming query: its state ops, its pushes
// to sink queues and its ack of the source partition, all in one
// transaction or none. Bad input is an invalid error, an unknown or
// retired query a not-found or conflict error and a partition that does
// not exist a not-found error, before or instead of any write; a cycle that could not apply (its lease expired, say) answers
// success false with the reason, as Queen does, having written nothing.
func (s *Service) Cycle(ctx context.Context, req api.StreamCycleRequest, producerSub string) (*api.StreamCycleResponse, error) {
	query, partition, err := parseIDs(req.QueryID, req.PartitionID)
	if err != nil {
		return nil, err
	}
	writes, err := planState(req.StateOps)
	if err != nil {
		return nil, err
	}
	if err := validate.List("push_items", len(req.PushItems), validate.PushItemsMax); err != nil {
		return nil, err
	}
	c := engine.StreamCycle{
		PartitionID: partition,
		Group:       req.ConsumerGroup,
		Push:        req.PushItems,
		Ack:         req.Ack,
		Release:     req.ReleaseLease == nil || *req.ReleaseLease,
		Apply: func(ctx context.Context, tx pgx.Tx, now time.Time) error {
			return applyCycleState(ctx, tx, query, partition, writes, now)
		},
	}
	out := &api.StreamCycleResponse{QueryID: query.String(), PartitionID: partition.String(), PushResults: []api.PushResult{}}
	res, err := s.eng.StreamCycle(ctx, c, producerSub)
	var aborted engine.CycleAborted
	if errors.As(err, &aborted) {
		out.Error = aborted.Reason
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	out.Success, out.QueueName, out.StateOpsApplied = true, res.Queue, len(req.StateOps)
	out.PushResults, out.AckResult = res.Pushed, res.Ack
	return out, nil
}

func applyCycleState(ctx context.Context, tx pgx.Tx, query, partition uuid.UUID, w stateWrites, now time.Time) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`,
		cycleLockClass, query.String()+":"+partition.String()); err != nil {
		return wrap(err, "lock cycle of %s/%s", query, partition)
	}
	if err := checkLive(ctx, tx, query, true); err != nil {
		return err
	}
	if err := checkPartition(ctx, tx, partition, true); err != nil {
		return err
	}
	return w.apply(ctx, tx, query, partition, now)
}
