package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/store"
)

// SeekRequest moves a consumer group's cursors on a queue (or on one of
// its partitions): to the end, or to the first message created at or after
// Timestamp. Exactly one of ToEnd and Timestamp is set.
type SeekRequest struct {
	Group     string
	Queue     string
	Partition string // empty: every partition of Queue
	ToEnd     bool
	Timestamp *time.Time
}

// Seek sets the group's committed offset on each partition: next_offset-1
// to skip everything, or the offset before the first message at or after
// the timestamp to replay from there. Leases on moved cursors are dropped
// (their acks then fail and the messages follow the new position), retry
// counts and delays reset, and partitions the group has not popped yet get a cursor so
// the seek holds for them too.
func (e *Engine) Seek(ctx context.Context, req SeekRequest) (*api.SeekResult, error) {
	if err := ValidateName("consumer group", req.Group); err != nil {
		return nil, err
	}
	if req.ToEnd == (req.Timestamp != nil) {
		return nil, invalidf(`seek needs exactly one of {"toEnd": true} and {"timestamp": "<RFC 3339 time>"}`)
	}
	qid, err := e.queueID(ctx, req.Queue)
	if err != nil {
		return nil, err
	}
	var only *uuid.UUID
	if req.Partition != "" {
		pid, err := e.partitionOf(ctx, req.Queue, req.Partition)
		if err != nil {
			return nil, err
		}
		only = &pid
	}
	now := e.clock.Now()
	res := &api.SeekResult{Success: true, ConsumerGroup: req.Group, QueueName: req.Queue, Partition: req.Partition,
		SeekToEnd: req.ToEnd, TargetTimestamp: req.Timestamp}
	err = pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		pids, committed, clamped, err := e.seekTargets(ctx, tx, qid, only, req.Group, req.Timestamp)
		if err != nil {
			return err
		}
		res.ClampedPartitions = clamped
		// Sorted by partition id, so concurrent seeks lock cursors in the
		// same order and cannot deadlock.
		if err := store.SeekCursors(ctx, tx, req.Group, now, pids, committed); err != nil {
			return fmt.Errorf("seek %s on %s: %w", req.Group, req.Queue, err)
		}
		res.PartitionsUpdated = len(pids)
		if only != nil && len(committed) == 1 {
			res.CommittedOffset = &committed[0]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if res.ClampedPartitions > 0 {
		e.log.Info("seek target precedes retained data: cursors start at the oldest retained message",
			"queue", req.Queue, "consumer_group", req.Group, "partitions", res.ClampedPartitions)
	}
	// Seeking back makes messages available: wake long polls.
	var fx effects
	fx.wake(req.Queue)
	e.fire(&fx)
	return res, nil
}

// seekTargets returns the partitions to move, sorted by id, with the
// committed offset each gets, and how many were clamped to their low
// watermark. It takes FOR KEY SHARE on each partition row before reading
// its target: a retention step holds the row FOR UPDATE while it reads the
// cursors and deletes, so the seek reads its target after any such step
// committed, and a step that comes later sees the moved cursor. A seek
// therefore never points a cursor at data a concurrent sweep is deleting.
// The group's cursors are locked before the partitions, the order of every
// writer that holds a cursor and then a partition (a transaction's acks,
// then its pushes), so the seek cannot deadlock with them.
func (e *Engine) seekTargets(ctx context.Context, tx pgx.Tx, qid int64, only *uuid.UUID, group string, at *time.Time) ([]uuid.UUID, []int64, int, error) {
	if err := store.LockGroupCursors(ctx, tx, qid, only, group); err != nil {
		return nil, nil, 0, fmt.Errorf("lock cursors to seek: %w", err)
	}
	parts, err := store.SharePartitions(ctx, tx, qid, only)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("list partitions to seek: %w", err)
	}
	pids := make([]uuid.UUID, len(parts))
	committed := make([]int64, len(parts))
	clamped := 0
	for i, p := range parts {
		pids[i], committed[i] = p.ID, p.Next-1
		// last_push_at is never earlier than the frames it wrote, so a
		// partition last pushed before the target has nothing at or after
		// it and needs no segment read.
		if at == nil || p.LastPush == nil || p.LastPush.Before(*at) {
			continue
		}
		off, err := store.OffsetAt(ctx, tx, p.ID, *at)
		if err != nil {
			return nil, nil, 0, err
		}
		if off <= p.Low && p.Low > 0 {
			off = p.Low
			clamped++
		}
		committed[i] = off - 1
	}
	return pids, committed, clamped, nil
}
