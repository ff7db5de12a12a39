package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/frame"
)

// Budget of one message browse: messages live inside segments, so a
// selective filter may have to decode many of them. Past either bound the
// page comes back short with Truncated set.
const (
	browseMaxSegments = 10_000
	browseMaxBytes    = 64 << 20
	browseBatch       = 200
)

// MessageFilter selects messages to browse. Partition needs Queue, since
// partition names are per queue. From and To bound createdAt, inclusive.
type MessageFilter struct {
	Queue     string
	Partition string
	Status    string
	From, To  *time.Time
	Page
}

// BrowsedMessage is one message of a browse page; the payload is left out
// (fetch one message for it).
type BrowsedMessage struct {
	ID             string            `json:"id"`
	TransactionID  string            `json:"transactionId"`
	TraceID        string            `json:"traceId,omitempty"`
	PartitionID    string            `json:"partitionId"`
	QueuePath      string            `json:"queuePath"`
	Queue          string            `json:"queue"`
	Partition      string            `json:"partition"`
	Namespace      string            `json:"namespace,omitempty"`
	Task           string            `json:"task,omitempty"`
	Offset         int64             `json:"offset"`
	Status         string            `json:"status"`
	ConsumerGroups map[string]string `json:"consumerGroups"`
	CreatedAt      time.Time         `json:"createdAt"`
	PayloadBytes   int               `json:"payloadBytes"`
}

// MessagePage is one page of a browse.
type MessagePage struct {
	Messages []BrowsedMessage `json:"messages"`
	Limit    int              `json:"limit"`
	Offset   int              `json:"offset"`
	// Truncated says the scan stopped at its budget before filling the
	// page: narrow the filters (queue, partition, from, to).
	Truncated bool `json:"truncated"`
}

type segmentRef struct {
	pid    uuid.UUID
	base   int64
	last   int64
	lastAt time.Time
	bytes  int
}

// BrowseMessages pages through stored messages, newest segments first and,
// within one, newest offset first (exact offset order when one partition
// is named). Status is computed per consumer group; see MsgPending.
func (e *Engine) BrowseMessages(ctx context.Context, f MessageFilter) (*MessagePage, error) {
	if err := f.Page.validate(); err != nil {
		return nil, err
	}
	status, err := normalizeMessageStatus(f.Status)
	if err != nil {
		return nil, err
	}
	var qid *int64
	var only *uuid.UUID
	switch {
	case f.Partition != "" && f.Queue == "":
		return nil, invalidf("partition filter needs queue too: partition names are per queue")
	case f.Partition != "":
		pid, err := e.partitionOf(ctx, f.Queue, f.Partition)
		if err != nil {
			return nil, err
		}
		only = &pid
	case f.Queue != "":
		id, err := e.queueID(ctx, f.Queue)
		if err != nil {
			return nil, err
		}
		qid = &id
	}
	b := &browser{e: e, f: f, status: status, readers: map[uuid.UUID]*partitionReaders{},
		page: &MessagePage{Messages: []BrowsedMessage{}, Limit: f.Limit, Offset: f.Offset}}
	var after *segmentRef
	for scanned := 0; !b.full(); {
		segs, err := e.segmentBatch(ctx, qid, only, f.From, f.To, after)
		if err != nil {
			return nil, err
		}
		for _, s := range segs {
			if b.full() {
				break
			}
			if scanned >= browseMaxSegments || b.bytes >= browseMaxBytes {
				b.page.Truncated = true
				return b.page, nil
			}
			scanned++
			if err := b.scan(ctx, s); err != nil {
				return nil, err
			}
		}
		if len(segs) < browseBatch {
			break
		}
		after = &segs[len(segs)-1]
	}
	return b.page, nil
}

// segmentBatch returns the next segments in browse order after the given
// one: by offset within one partition, by last write time across several.
func (e *Engine) segmentBatch(ctx context.Context, qid *int64, only *uuid.UUID, from, to *time.Time, after *segmentRef) ([]segmentRef, error) {
	var rows pgx.Rows
	var err error
	const cols = `SELECT s.partition_id, s.base_offset, s.last_offset, s.last_at, s.byte_size FROM lethe.segments s`
	const times = ` AND ($2::timestamptz IS NULL OR s.last_at >= $2) AND ($3::timestamptz IS NULL OR s.first_at <= $3)`
	if only != nil {
		before := int64(1<<63 - 1)
		if after != nil {
			before = after.base
		}
		rows, err = e.pool.Query(ctx, cols+` WHERE s.partition_id = $1`+times+` AND s.base_offset < $4
			 ORDER BY s.base_offset DESC LIMIT $5`, *only, from, to, before, browseBatch)
	} else {
		var at *time.Time
		var pid *uuid.UUID
		var base *int64
		if after != nil {
			at, pid, base = &after.lastAt, &after.pid, &after.base
		}
		rows, err = e.pool.Query(ctx, cols+` JOIN lethe.partitions p ON p.id = s.partition_id
			 WHERE ($1::bigint IS NULL OR p.queue_id = $1)`+times+`
			   AND ($4::timestamptz IS NULL OR (s.last_at, s.partition_id, s.base_offset) < ($4, $5::uuid, $6::bigint))
			 ORDER BY s.last_at DESC, s.partition_id DESC, s.base_offset DESC LIMIT $7`,
			qid, from, to, at, pid, base, browseBatch)
	}
	if err != nil {
		return nil, fmt.Errorf("list segments to browse: %w", err)
	}
	segs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (segmentRef, error) {
		var s segmentRef
		return s, r.Scan(&s.pid, &s.base, &s.last, &s.lastAt, &s.bytes)
	})
	if err != nil {
		return nil, fmt.Errorf("list segments to browse: %w", err)
	}
	return segs, nil
}

// browser fills one page.
type browser struct {
	e       *Engine
	f       MessageFilter
	status  string
	readers map[uuid.UUID]*partitionReaders
	page    *MessagePage
	skipped int
	bytes   int
}

func (b *browser) full() bool { return len(b.page.Messages) >= b.f.Limit }

// scan decodes one segment and adds its matching frames, newest first.
func (b *browser) scan(ctx context.Context, s segmentRef) error {
	var seg []byte
	err := b.e.pool.QueryRow(ctx, `SELECT frames FROM lethe.segments WHERE partition_id = $1 AND base_offset = $2`,
		s.pid, s.base).Scan(&seg)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // removed by retention since it was listed
	}
	if err != nil {
		return fmt.Errorf("read segment %d of %s: %w", s.base, s.pid, err)
	}
	b.bytes += len(seg)
	msgs, err := frame.Decode(seg)
	if err != nil {
		return fmt.Errorf("decode segment %d of %s: %w", s.base, s.pid, err)
	}
	pr := b.readers[s.pid]
	if pr == nil {
		if pr, err = b.e.loadReaders(ctx, s.pid); err != nil {
			return err
		}
		b.readers[s.pid] = pr
	}
	dead, err := b.e.deadGroups(ctx, s.pid, s.base, s.last)
	if err != nil {
		return err
	}
	for i := len(msgs) - 1; i >= 0 && !b.full(); i-- {
		m, off := msgs[i], s.base+int64(i)
		if (b.f.From != nil && m.CreatedAt.Before(*b.f.From)) || (b.f.To != nil && m.CreatedAt.After(*b.f.To)) {
			continue
		}
		st, groups := pr.status(off, m.CreatedAt, dead[off])
		if b.status != "" && st != b.status {
			continue
		}
		if b.skipped < b.f.Offset {
			b.skipped++
			continue
		}
		l := pr.label
		b.page.Messages = append(b.page.Messages, BrowsedMessage{
			ID: MessageID(s.pid, off), TransactionID: m.TxnID, TraceID: m.TraceID, PartitionID: s.pid.String(),
			QueuePath: l.queue + "/" + l.partition, Queue: l.queue, Partition: l.partition, Namespace: l.namespace,
			Task: l.task, Offset: off, Status: st, ConsumerGroups: groups, CreatedAt: m.CreatedAt,
			PayloadBytes: len(m.Payload),
		})
	}
	return nil
}

// MessageDetail is one message with its payload.
type MessageDetail struct {
	BrowsedMessage
	ProducerSub  string          `json:"producerSub,omitempty"`
	Payload      json.RawMessage `json:"payload"`
	ErrorMessage string          `json:"errorMessage,omitempty"`
	RetryCount   int             `json:"retryCount,omitempty"`
}

// GetMessage finds a message by partition and transaction id, through the
// transaction id sidecar (lethe.txns).
func (e *Engine) GetMessage(ctx context.Context, partitionID, txnID string) (*MessageDetail, error) {
	pid, err := uuid.Parse(partitionID)
	if err != nil {
		return nil, invalidf("partition id %q is not a UUID (the partitionId of a pushed or popped message)", partitionID)
	}
	if txnID == "" || len(txnID) > maxNameLen {
		return nil, invalidf("transaction id must be 1 to %d bytes", maxNameLen)
	}
	pr, err := e.loadReaders(ctx, pid)
	if err != nil {
		return nil, err
	}
	off, found, err := txnOffset(ctx, e.pool, pid, txnID)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, notFoundf("no message with transaction id %q in partition %s (never pushed, or older than the deduplication window that keeps transaction ids)",
			txnID, pid)
	}
	frames, err := readFrames(ctx, e.pool, pid, off, 1, farFuture)
	if err != nil {
		return nil, err
	}
	if len(frames) == 0 || frames[0].offset != off || frames[0].TxnID != txnID {
		return nil, notFoundf("message %q at offset %d of partition %s is no longer stored (removed by retention)", txnID, off, pid)
	}
	f := frames[0]
	var dead []string
	var errMsg string
	var retries int
	rows, err := e.pool.Query(ctx, `
		SELECT group_name, error, retry_count FROM lethe.dead_letters
		 WHERE partition_id = $1 AND msg_offset = $2 ORDER BY failed_at`, pid, off)
	if err != nil {
		return nil, fmt.Errorf("load dead letters of message %s: %w", txnID, err)
	}
	var group string
	if _, err := pgx.ForEachRow(rows, []any{&group, &errMsg, &retries}, func() error {
		dead = append(dead, group)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("load dead letters of message %s: %w", txnID, err)
	}
	st, groups := pr.status(off, f.CreatedAt, dead)
	l := pr.label
	return &MessageDetail{
		BrowsedMessage: BrowsedMessage{
			ID: MessageID(pid, off), TransactionID: f.TxnID, TraceID: f.TraceID, PartitionID: pid.String(),
			QueuePath: l.queue + "/" + l.partition, Queue: l.queue, Partition: l.partition, Namespace: l.namespace,
			Task: l.task, Offset: off, Status: st, ConsumerGroups: groups, CreatedAt: f.CreatedAt,
			PayloadBytes: len(f.Payload),
		},
		ProducerSub: f.ProducerSub, Payload: f.Payload, ErrorMessage: errMsg, RetryCount: retries,
	}, nil
}
