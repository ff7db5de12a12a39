package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/store"
)

// DeleteConsumerGroup forgets where group stands: its cursors (and leases)
// on queue, or on every queue when queue is empty. With deleteMetadata its
// subscriptions go too, so its next pop subscribes afresh; without, the
// next pop starts each partition where the subscription says. Its dead
// letters stay: they are copies an operator may still replay.
func (e *Engine) DeleteConsumerGroup(ctx context.Context, group, queue string, deleteMetadata bool) (*api.GroupDeleted, error) {
	if err := ValidateName("consumer group", group); err != nil {
		return nil, err
	}
	var qid *int64
	if queue != "" {
		id, err := e.queueID(ctx, queue)
		if err != nil {
			return nil, err
		}
		qid = &id
	}
	res := &api.GroupDeleted{Success: true, ConsumerGroup: group, QueueName: queue, MetadataDeleted: deleteMetadata}
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		exists, err := store.GroupExists(ctx, tx, group, qid)
		if err != nil {
			return fmt.Errorf("look up consumer group %s: %w", group, err)
		}
		if !exists {
			if queue != "" {
				return notFoundf("consumer group %q has no subscription or cursor on queue %q", group, queue)
			}
			return notFoundf("consumer group %q does not exist (no subscription or cursor on any queue)", group)
		}
		deleted, err := store.DeleteGroupCursors(ctx, tx, group, qid)
		if err != nil {
			return fmt.Errorf("delete cursors of %s: %w", group, err)
		}
		res.DeletedPartitions = deleted
		if deleteMetadata {
			if err := store.DeleteGroupSubscriptions(ctx, tx, group, qid); err != nil {
				return fmt.Errorf("delete subscriptions of %s: %w", group, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if deleteMetadata {
		e.ForgetSubscriptions()
	}
	return res, nil
}

// UpdateSubscription moves the start time of every subscription of group.
// It decides where the group starts on partitions it has not popped yet;
// to move the group on partitions it already reads, seek.
func (e *Engine) UpdateSubscription(ctx context.Context, group string, from time.Time) (*api.SubscriptionUpdated, error) {
	if err := ValidateName("consumer group", group); err != nil {
		return nil, err
	}
	moved, err := store.MoveSubscriptions(ctx, e.pool, group, from)
	if err != nil {
		return nil, fmt.Errorf("update subscriptions of %s: %w", group, err)
	}
	if moved == 0 {
		return nil, notFoundf("consumer group %q has no subscription; it gets one on its first pop", group)
	}
	// Other replicas pick the change up when their cache entry expires.
	e.ForgetSubscriptions()
	return &api.SubscriptionUpdated{Success: true, ConsumerGroup: group, NewTimestamp: from.UTC(), RowsUpdated: moved}, nil
}
