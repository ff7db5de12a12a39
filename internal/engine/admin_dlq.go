package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/frame"
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

// DeadLetter is a message a consumer group gave up on.
type DeadLetter struct {
	ID            string          `json:"id"`
	MessageID     string          `json:"messageId"`
	TransactionID string          `json:"transactionId"`
	TraceID       string          `json:"traceId,omitempty"`
	PartitionID   string          `json:"partitionId"`
	Partition     string          `json:"partition"`
	Queue         string          `json:"queue"`
	ConsumerGroup string          `json:"consumerGroup"`
	Offset        int64           `json:"offset"`
	Data          json.RawMessage `json:"data"`
	// DataError says why data is null although the message had a payload:
	// it is sealed under a key this server does not hold.
	DataError    string    `json:"dataError,omitempty"`
	ErrorMessage string    `json:"errorMessage"`
	RetryCount   int       `json:"retryCount"`
	CreatedAt    time.Time `json:"createdAt"`
	FailedAt     time.Time `json:"failedAt"`
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
func (e *Engine) DeadLetters(ctx context.Context, f DeadLetterFilter) ([]DeadLetter, int64, error) {
	if err := f.Page.validate(); err != nil {
		return nil, 0, err
	}
	if f.Queue != "" {
		if _, err := e.queueID(ctx, f.Queue); err != nil {
			return nil, 0, err
		}
	}
	args := []any{nullIfEmpty(f.Queue), nullIfEmpty(f.Group), nullIfEmpty(f.Partition), f.From, f.To}
	var total int64
	if err := e.pool.QueryRow(ctx, `SELECT count(*)`+deadLetterWhere, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count dead letters: %w", err)
	}
	rows, err := e.pool.Query(ctx, `
		SELECT d.id, d.partition_id, p.name, q.name, d.group_name, d.msg_offset, d.txn_id, d.trace_id,
		       d.payload, d.payload_sealed, d.error, d.retry_count, d.created_at, d.failed_at`+deadLetterWhere+`
		 ORDER BY d.failed_at DESC, d.id DESC LIMIT $6 OFFSET $7`, append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list dead letters: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DeadLetter, error) {
		var d DeadLetter
		var id int64
		var pid uuid.UUID
		var payload, sealed []byte
		err := r.Scan(&id, &pid, &d.Partition, &d.Queue, &d.ConsumerGroup, &d.Offset, &d.TransactionID, &d.TraceID,
			&payload, &sealed, &d.ErrorMessage, &d.RetryCount, &d.CreatedAt, &d.FailedAt)
		d.ID, d.PartitionID, d.MessageID = strconv.FormatInt(id, 10), pid.String(), MessageID(pid, d.Offset)
		d.Data = payload
		if sealed != nil {
			var openErr error
			if d.Data, openErr = e.openDeadLetter(sealed); openErr != nil {
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

// ParseDeadLetterID checks the id of a dead letter as it appears in URLs.
func ParseDeadLetterID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, invalidf("dead letter id must be a positive whole number (the id field of GET /api/v1/dlq), got %q", s)
	}
	return id, nil
}

// DeleteDeadLetter drops one dead letter for good.
func (e *Engine) DeleteDeadLetter(ctx context.Context, id int64) error {
	tag, err := e.pool.Exec(ctx, `DELETE FROM lethe.dead_letters WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("delete dead letter %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return notFoundf("dead letter %d does not exist (already replayed or deleted?)", id)
	}
	return nil
}

// Replayed answers a dead letter replay.
type Replayed struct {
	Success       bool   `json:"success"`
	ID            string `json:"id"`
	Queue         string `json:"queue"`
	Partition     string `json:"partition"`
	PartitionID   string `json:"partitionId"`
	TransactionID string `json:"transactionId"`
	MessageID     string `json:"messageId"`
	Offset        int64  `json:"offset"`
}

// ReplayDeadLetter appends the dead letter's payload to its partition again
// under a new transaction id and deletes the dead letter, both in one
// transaction. The copy lands at the end of the log, so every consumer
// group reading that partition receives it, not only the one that gave up.
func (e *Engine) ReplayDeadLetter(ctx context.Context, id int64) (*Replayed, error) {
	res := &Replayed{Success: true, ID: strconv.FormatInt(id, 10), TransactionID: uuid.NewString()}
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		var pid uuid.UUID
		var traceID string
		var payload, sealed []byte
		err := tx.QueryRow(ctx, `
			SELECT d.partition_id, q.name, p.name, d.trace_id, d.payload, d.payload_sealed
			  FROM lethe.dead_letters d
			  JOIN lethe.partitions p ON p.id = d.partition_id
			  JOIN lethe.queues q ON q.id = p.queue_id
			 WHERE d.id = $1 FOR UPDATE OF d`, id).Scan(&pid, &res.Queue, &res.Partition, &traceID, &payload, &sealed)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFoundf("dead letter %d does not exist (already replayed or deleted?)", id)
		}
		if err != nil {
			return fmt.Errorf("load dead letter %d: %w", id, err)
		}
		now := e.clock.Now()
		f, err := e.replayFrame(ctx, id, res, traceID, payload, sealed, now)
		if err != nil {
			return err
		}
		b := store.NewBatch(1, 0)
		b.Add(store.TxnHash(res.TransactionID), f, now)
		appended, err := store.Append(ctx, tx, pid, b, now)
		if errors.Is(err, store.ErrPartitionGone) {
			return fmt.Errorf("%w: partition %s was deleted meanwhile", ErrConflict, pid)
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM lethe.dead_letters WHERE id = $1`, id); err != nil {
			return fmt.Errorf("delete replayed dead letter %d: %w", id, err)
		}
		res.PartitionID, res.Offset = pid.String(), appended[0].Offset
		res.MessageID = MessageID(pid, res.Offset)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var fx effects
	fx.pushed(res.Queue, 1)
	e.fire(&fx)
	return res, nil
}

// replayFrame is the frame a replay appends: the dead letter's payload,
// opened when it was sealed and sealed again when its queue is encrypted.
func (e *Engine) replayFrame(ctx context.Context, id int64, res *Replayed, traceID string, payload, sealed []byte, now time.Time) ([]byte, error) {
	if sealed != nil {
		plain, err := e.openDeadLetter(sealed)
		if err != nil {
			return nil, fmt.Errorf("%w: dead letter %d cannot be replayed: %v; configure the key that sealed it (QUEEN_ENCRYPTION_KEY_PREVIOUS) and replay again",
				ErrConflict, id, err)
		}
		payload = plain
	}
	if payload == nil {
		return nil, fmt.Errorf("%w: dead letter %d has no payload (its message was gone or unreadable when it failed), so there is nothing to replay; delete it instead",
			ErrConflict, id)
	}
	q, err := e.catalog.queue(ctx, res.Queue)
	if err != nil {
		return nil, err
	}
	m := frame.Message{CreatedAt: now, TxnID: res.TransactionID, TraceID: traceID, Payload: payload}
	if err := e.sealFor(q, &m); err != nil {
		return nil, err
	}
	return frame.Encode(m), nil
}

// openDeadLetter opens a dead letter's sealed payload.
func (e *Engine) openDeadLetter(sealed []byte) ([]byte, error) {
	plain, err := e.cfg.Keys.Open(sealed)
	if err != nil {
		return nil, fmt.Errorf("the payload is encrypted and cannot be opened: %w", err)
	}
	return plain, nil
}
