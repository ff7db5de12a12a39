package inspect

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/api"
	"github.com/lethe-mq/lethe/internal/store"
)

// DeadLetterFilter selects dead letters; empty fields do not filter. From
// and To bound failedAt, both inclusive.
type DeadLetterFilter struct {
	Queue     string
	Group     string
	Partition string
	From, To  *time.Time
	Page
}

const deadLetterWhere = `
	  FROM lethe.dead_letters d
	  JOIN lethe.partitions p ON p.id = d.partition_id
	  JOIN lethe.queues q ON q.id = p.queue_id
	 WHERE ($1::text IS NULL OR q.name = $1) AND ($2::text IS NULL OR d.group_name = $2)
	   AND ($3::text IS NULL OR p.name = $3)
	   AND ($4::timestamptz IS NULL OR d.failed_at >= $4) AND ($5::timestamptz IS NULL OR d.failed_at <= $5)`

// DeadLetters lists dead letters, the most recently failed first, and how
// many match the filter in all.
func (r *Reader) DeadLetters(ctx context.Context, f DeadLetterFilter) ([]api.DeadLetter, int64, error) {
	if err := f.Page.validate(); err != nil {
		return nil, 0, err
	}
	if f.Queue != "" {
		if _, err := r.queueID(ctx, f.Queue); err != nil {
			return nil, 0, err
		}
	}
	args := []any{nullIfEmpty(f.Queue), nullIfEmpty(f.Group), nullIfEmpty(f.Partition), f.From, f.To}
	var total int64
	if err := r.pool.QueryRow(ctx, `SELECT count(*)`+deadLetterWhere, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count dead letters: %w", err)
	}
	rows, err := r.pool.Query(ctx, `
		SELECT d.id, d.partition_id, p.name, q.name, d.group_name, d.msg_offset, d.txn_id, d.trace_id,
		       d.payload, d.payload_sealed, d.error, d.retry_count, d.created_at, d.failed_at`+deadLetterWhere+`
		 ORDER BY d.failed_at DESC, d.id DESC LIMIT $6 OFFSET $7`, append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list dead letters: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (api.DeadLetter, error) {
		var d api.DeadLetter
		var id int64
		var pid uuid.UUID
		var payload, sealed []byte
		err := row.Scan(&id, &pid, &d.Partition, &d.Queue, &d.ConsumerGroup, &d.Offset, &d.TransactionID, &d.TraceID,
			&payload, &sealed, &d.ErrorMessage, &d.RetryCount, &d.CreatedAt, &d.FailedAt)
		d.ID, d.PartitionID, d.MessageID = strconv.FormatInt(id, 10), pid.String(), store.MessageID(pid, d.Offset)
		d.Data = payload
		if sealed != nil {
			var openErr error
			if d.Data, openErr = r.openDeadLetter(sealed); openErr != nil {
				d.DataError = openErr.Error()
			}
		}
		d.CreatedAt, d.FailedAt = d.CreatedAt.UTC(), d.FailedAt.UTC()
		return d, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list dead letters: %w", err)
	}
	return out, total, nil
}

// openDeadLetter opens a dead letter's sealed payload.
func (r *Reader) openDeadLetter(sealed []byte) ([]byte, error) {
	plain, err := r.cfg.Keys.Open(sealed)
	if err != nil {
		return nil, fmt.Errorf("the payload is encrypted and cannot be opened: %w", err)
	}
	return plain, nil
}
