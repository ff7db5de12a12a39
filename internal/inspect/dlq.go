package inspect

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
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
	// MaxBytes bounds the payloads of one page (0: browseMaxBytes, as a
	// message browse): the page stops before the dead letter whose
	// payloads before it reach it, the first always coming, and says
	// Truncated.
	MaxBytes int64
}

const deadLetterWhere = `
	  FROM lethe.dead_letters d
	  JOIN lethe.partitions p ON p.id = d.partition_id
	  JOIN lethe.queues q ON q.id = p.queue_id
	 WHERE ($1::text IS NULL OR q.name = $1) AND ($2::text IS NULL OR d.group_name = $2)
	   AND ($3::text IS NULL OR p.name = $3)
	   AND ($4::timestamptz IS NULL OR d.failed_at >= $4) AND ($5::timestamptz IS NULL OR d.failed_at <= $5)`

// DeadLetters lists a page of dead letters, the most recently failed
// first, with how many match the filter in all. A page is bounded in
// payload bytes as well as in rows (MaxBytes), so that a page of large
// dead letters cannot exhaust the server's memory: the rows past the bound
// are not kept, and the page says Truncated.
func (r *Reader) DeadLetters(ctx context.Context, f DeadLetterFilter) (*api.DeadLetterList, error) {
	if err := f.Page.validate(); err != nil {
		return nil, err
	}
	if f.Queue != "" {
		if _, err := r.queueID(ctx, f.Queue); err != nil {
			return nil, err
		}
	}
	maxBytes := cmp.Or(f.MaxBytes, browseMaxBytes)
	out := &api.DeadLetterList{Messages: []api.DeadLetter{}, Limit: f.Limit, Offset: f.Offset}
	args := []any{nullIfEmpty(f.Queue), nullIfEmpty(f.Group), nullIfEmpty(f.Partition), f.From, f.To}
	if err := r.pool.QueryRow(ctx, `SELECT count(*)`+deadLetterWhere, args...).Scan(&out.Total); err != nil {
		return nil, fmt.Errorf("count dead letters: %w", err)
	}
	rows, err := r.pool.Query(ctx, `
		SELECT d.id, d.partition_id, p.name, q.name, d.group_name, d.msg_offset, d.txn_id, d.trace_id,
		       d.payload, d.payload_sealed, d.error, d.retry_count, d.created_at, d.failed_at`+deadLetterWhere+`
		 ORDER BY d.failed_at DESC, d.id DESC LIMIT $6 OFFSET $7`, append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, fmt.Errorf("list dead letters: %w", err)
	}
	defer rows.Close()
	// Rows arrive one at a time: the page stops taking them once their
	// payloads reach the bound (the rest of the page is read off the
	// connection and dropped, never held).
	var bytes int64
	for rows.Next() {
		if len(out.Messages) > 0 && bytes >= maxBytes {
			out.Truncated = true
			break
		}
		d, n, err := r.scanDeadLetter(rows)
		if err != nil {
			return nil, fmt.Errorf("list dead letters: %w", err)
		}
		out.Messages = append(out.Messages, d)
		bytes += n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list dead letters: %w", err)
	}
	return out, nil
}

// scanDeadLetter reads one row of DeadLetters, opening a sealed payload,
// and answers the payload bytes it holds.
func (r *Reader) scanDeadLetter(row pgx.Rows) (api.DeadLetter, int64, error) {
	var d api.DeadLetter
	var id int64
	var pid uuid.UUID
	var payload, sealed []byte
	if err := row.Scan(&id, &pid, &d.Partition, &d.Queue, &d.ConsumerGroup, &d.Offset, &d.TransactionID, &d.TraceID,
		&payload, &sealed, &d.ErrorMessage, &d.RetryCount, &d.CreatedAt, &d.FailedAt); err != nil {
		return d, 0, err
	}
	d.ID, d.PartitionID, d.MessageID = strconv.FormatInt(id, 10), pid.String(), store.MessageID(pid, d.Offset)
	d.Data = payload
	if sealed != nil {
		var openErr error
		if d.Data, openErr = r.openDeadLetter(sealed); openErr != nil {
			d.DataError = openErr.Error()
		}
	}
	d.CreatedAt, d.FailedAt = d.CreatedAt.UTC(), d.FailedAt.UTC()
	return d, int64(len(payload) + len(sealed)), nil
}

// openDeadLetter opens a dead letter's sealed payload.
func (r *Reader) openDeadLetter(sealed []byte) ([]byte, error) {
	plain, err := r.cfg.Keys.Open(sealed)
	if err != nil {
		return nil, fmt.Errorf("the payload is encrypted and cannot be opened: %w", err)
	}
	return plain, nil
}
