package retention

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// cleanupKey is the lethe.settings row whose updated_at spaces the cleanup
// phase across every replica.
const cleanupKey = "retention.partition_cleanup"

// cleanupPhase deletes partitions that stayed empty and idle for
// PartitionCleanupDays, then the 'all'-mode subscriptions of groups left
// without a cursor on a queue that holds nothing, at most once a minute
// across replicas. A partition whose deletion fails is recorded and
// skipped.
func (s *Service) cleanupPhase(ctx context.Context, conn *pgx.Conn, now time.Time, res *CycleResult) error {
	if s.cfg.KeepPartitions {
		return nil
	}
	due, err := s.cleanupDue(ctx, conn, now)
	if err != nil || !due {
		return err
	}
	res.CleanupRan = true
	idleBefore, ok := daysBefore(now, s.cfg.PartitionCleanupDays)
	if !ok {
		return nil
	}
	forgotten := map[string]bool{}
	defer func() {
		for q := range forgotten {
			if s.cfg.Forget != nil {
				s.cfg.Forget(q)
			}
		}
	}()
	err = s.inBatches(ctx, PhaseCleanup, uuid.Nil, func(sctx context.Context, after uuid.UUID) ([]uuid.UUID, error) {
		return s.cleanupCandidates(sctx, conn, after, idleBefore)
	}, func(id uuid.UUID) error {
		return s.cleanupOne(ctx, conn, id, idleBefore, now, res, forgotten)
	})
	if err != nil {
		return err
	}
	return s.cleanupSubscriptions(ctx, conn, idleBefore, res)
}

// cleanupOne deletes one candidate partition, recording a failure and
// going on unless the cycle must stop.
func (s *Service) cleanupOne(ctx context.Context, conn *pgx.Conn, id uuid.UUID, idleBefore, now time.Time,
	res *CycleResult, forgotten map[string]bool) error {
	var queue string
	err := s.step(ctx, PhaseCleanup, 0, func(sctx context.Context) error {
		var err error
		queue, err = s.cleanupPartition(sctx, conn, id, idleBefore, now)
		return err
	})
	if err != nil {
		return s.failed(ctx, conn, PhaseCleanup, "", id.String(), err, res)
	}
	if queue != "" {
		res.PartitionsDeleted++
		s.metrics.partitionsDeleted.Inc()
		forgotten[queue] = true
	}
	return nil
}

// cleanupDue claims this minute's cleanup: the update happens, and a row
// comes back, only when the last run is a minute old (or in the future,
// after the clock was set back).
func (s *Service) cleanupDue(ctx context.Context, conn *pgx.Conn, now time.Time) (bool, error) {
	rows, err := conn.Query(ctx, `
		INSERT INTO lethe.settings (key, value, updated_at)
		VALUES ($1, jsonb_build_object('lastRunAt', $2::timestamptz), $2)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
		 WHERE lethe.settings.updated_at <= $2::timestamptz - make_interval(secs => $3)
		    OR lethe.settings.updated_at > $2::timestamptz
		RETURNING 1`, cleanupKey, now, PartitionCleanupEvery.Seconds())
	if err != nil {
		return false, fmt.Errorf("retention: schedule partition cleanup: %w", err)
	}
	defer rows.Close()
	due := rows.Next()
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("retention: schedule partition cleanup: %w", err)
	}
	return due, nil
}

// cleanupCandidates lists, in id order after after, partitions that look
// reclaimable; cleanup_partition checks each again under its lock.
func (s *Service) cleanupCandidates(ctx context.Context, conn *pgx.Conn, after uuid.UUID, idleBefore time.Time) ([]uuid.UUID, error) {
	rows, err := conn.Query(ctx, `
		SELECT p.id FROM lethe.partitions p
		 WHERE p.id > $1 AND p.next_offset = p.low_watermark
		   AND coalesce(p.last_push_at, p.created_at) < $2
		   AND lethe.partition_reclaimable(p.id, $2)
		 ORDER BY p.id
		 LIMIT $3`, after, idleBefore, s.cfg.BatchSize)
	if err != nil {
		return nil, fmt.Errorf("retention: find partitions to clean up: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("retention: find partitions to clean up: %w", err)
	}
	return ids, nil
}

func (s *Service) cleanupPartition(ctx context.Context, conn *pgx.Conn, id uuid.UUID, idleBefore, now time.Time) (string, error) {
	var queue *string
	if err := conn.QueryRow(ctx, `SELECT lethe.cleanup_partition($1, $2, $3)`, id, idleBefore, now).Scan(&queue); err != nil {
		return "", fmt.Errorf("retention: clean up partition %s: %w", id, err)
	}
	if queue == nil {
		return "", nil
	}
	return *queue, nil
}

// cleanupSubscriptions deletes subscriptions in 'all' mode (no start
// point) whose group has no cursor left on the queue, that are older than
// the idle window, on a queue that holds no segment: the group's next pop
// registers the same subscription again, and nothing was owed to it. While
// the queue holds data the subscription stays: completed retention counts
// the group as wanting all of it. Subscriptions with a start point ('new'
// or a time) cannot be recreated and stay until the group or the queue is
// deleted.
func (s *Service) cleanupSubscriptions(ctx context.Context, conn *pgx.Conn, idleBefore time.Time, res *CycleResult) error {
	for n := 0; ; n++ {
		var deleted int64
		err := s.step(ctx, PhaseCleanup, n, func(sctx context.Context) error {
			tag, err := conn.Exec(sctx, `
				DELETE FROM lethe.subscriptions s
				 USING (SELECT s2.queue_id, s2.group_name FROM lethe.subscriptions s2
				         WHERE s2.from_at IS NULL AND s2.created_at < $1
				           AND NOT EXISTS (SELECT 1 FROM lethe.cursors c
				                             JOIN lethe.partitions p ON p.id = c.partition_id
				                            WHERE p.queue_id = s2.queue_id AND c.group_name = s2.group_name)
				           AND NOT EXISTS (SELECT 1 FROM lethe.partitions p
				                            WHERE p.queue_id = s2.queue_id AND p.next_offset > p.low_watermark)
				         LIMIT $2) d
				 WHERE s.queue_id = d.queue_id AND s.group_name = d.group_name`, idleBefore, s.cfg.BatchSize)
			deleted = tag.RowsAffected()
			return err
		})
		if err != nil {
			return fmt.Errorf("retention: clean up subscriptions: %w", err)
		}
		res.SubscriptionsDeleted += int(deleted)
		if deleted < int64(s.cfg.BatchSize) {
			return nil
		}
	}
}
