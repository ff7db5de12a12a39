package store

import (
	"context"
	"fmt"
)

// DeleteQueueStep deletes up to limit segments of queue queueID's
// partitions, and once none is left, the queue's transaction hashes. Each
// call is one short statement or two; done says nothing of the queue is
// stored any more. Deleting a queue's rows is the caller's next step.
func DeleteQueueStep(ctx context.Context, q Querier, queueID int64, limit int) (segments int64, done bool, err error) {
	tag, err := q.Exec(ctx, `
		DELETE FROM lethe.segments s USING (
			SELECT s2.partition_id, s2.base_offset FROM lethe.segments s2
			  JOIN lethe.partitions p ON p.id = s2.partition_id
			 WHERE p.queue_id = $1 LIMIT $2) d
		 WHERE s.partition_id = d.partition_id AND s.base_offset = d.base_offset`, queueID, limit)
	if err != nil {
		return 0, false, fmt.Errorf("delete segments of queue %d: %w", queueID, err)
	}
	if tag.RowsAffected() >= int64(limit) {
		return tag.RowsAffected(), false, nil
	}
	if _, err := q.Exec(ctx, `DELETE FROM lethe.txns t USING lethe.partitions p WHERE p.id = t.partition_id AND p.queue_id = $1`,
		queueID); err != nil {
		return tag.RowsAffected(), false, fmt.Errorf("delete transaction hashes of queue %d: %w", queueID, err)
	}
	return tag.RowsAffected(), true, nil
}

// DeleteQueueRow deletes queue qid's row, the last step of its deletion
// once DeleteQueueStep answered done.
func DeleteQueueRow(ctx context.Context, q Querier, qid int64) error {
	_, err := q.Exec(ctx, `DELETE FROM lethe.queues WHERE id = $1`, qid)
	return err
}
