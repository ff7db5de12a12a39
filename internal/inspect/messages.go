package inspect

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/pushdec"
	"github.com/lethe-mq/lethe/internal/seal"
	"github.com/lethe-mq/lethe/internal/store"
	"github.com/lethe-mq/lethe/internal/validate"
)

// Budget of one message browse: messages live inside segments, so a
// selective filter may have to decode many of them. Past either bound the
// page comes back short with Truncated set.
const (
	browseMaxSegments = 10_000
	browseMaxBytes    = validate.PagePayloadBytes
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

// BrowseMessages pages through stored messages, newest segments first and,
// within one, newest offset first (exact offset order when one partition
// is named). Status is computed per consumer group; see api.MessagePending.
func (r *Reader) BrowseMessages(ctx context.Context, f MessageFilter) (*api.MessagePage, error) {
	if err := f.Page.validate(); err != nil {
		return nil, err
	}
	status, err := normalizeMessageStatus(f.Status)
	if err != nil {
		return nil, err
	}
	sf, err := r.segmentFilter(ctx, f)
	if err != nil {
		return nil, err
	}
	b := &browser{r: r, f: f, status: status, readers: map[uuid.UUID]*partitionReaders{},
		page: &api.MessagePage{Messages: []api.BrowsedMessage{}, Limit: f.Limit, Offset: f.Offset}}
	defer r.fire(&b.fx)
	var after *store.SegmentRef
	for scanned := 0; !b.full(); {
		segs, err := store.ListSegments(ctx, r.pool, sf, after, browseBatch)
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

// segmentFilter turns a browse filter into the segments to scan.
func (r *Reader) segmentFilter(ctx context.Context, f MessageFilter) (store.SegmentFilter, error) {
	sf := store.SegmentFilter{From: f.From, To: f.To}
	switch {
	case f.Partition != "" && f.Queue == "":
		return sf, invalidf("partition filter needs queue too: partition names are per queue")
	case f.Partition != "":
		pid, err := r.partitionOf(ctx, f.Queue, f.Partition)
		if err != nil {
			return sf, err
		}
		sf.Partition = &pid
	case f.Queue != "":
		id, err := r.queueID(ctx, f.Queue)
		if err != nil {
			return sf, err
		}
		sf.Queue = &id
	}
	return sf, nil
}

// browser fills one page.
type browser struct {
	r       *Reader
	f       MessageFilter
	status  string
	readers map[uuid.UUID]*partitionReaders
	page    *api.MessagePage
	skipped int
	bytes   int
	fx      faults
}

func (b *browser) full() bool { return len(b.page.Messages) >= b.f.Limit }

// scan decodes one segment and adds its matching frames, newest first.
// What cannot be read is counted and skipped, never an error for the page.
func (b *browser) scan(ctx context.Context, s store.SegmentRef) error {
	pr := b.readers[s.Partition]
	if pr == nil {
		var err error
		if pr, err = b.r.loadReaders(ctx, s.Partition); err != nil {
			return err
		}
		b.readers[s.Partition] = pr
	}
	frames, size, found, err := store.ReadSegment(ctx, b.r.pool, s)
	if err != nil && store.DataFault(err) {
		b.fx.partitionFailed(pr.label.queue, pr.label.partition, "browse", err)
		b.page.Unreadable += int(s.Last - s.Base + 1)
		return nil
	}
	if err != nil || !found { // not found: removed by retention since it was listed
		return err
	}
	b.bytes += size
	dead, err := b.r.deadGroups(ctx, s.Partition, s.Base, s.Last)
	if err != nil {
		return err
	}
	for i := len(frames) - 1; i >= 0 && !b.full(); i-- {
		b.add(s.Partition, pr, &frames[i], dead[frames[i].Offset])
	}
	return nil
}

// add puts one frame on the page if it matches the filter and is past the
// page's offset.
func (b *browser) add(pid uuid.UUID, pr *partitionReaders, m *store.Frame, dead []string) {
	if m.Err != nil {
		b.page.Unreadable++
		b.fx.unreadable(pr.label.queue, pr.label.partition, 1, m.Err)
		return
	}
	if (b.f.From != nil && m.CreatedAt.Before(*b.f.From)) || (b.f.To != nil && m.CreatedAt.After(*b.f.To)) {
		return
	}
	st, groups := pr.status(m.Offset, m.CreatedAt, dead)
	if b.status != "" && st != b.status {
		return
	}
	if b.skipped < b.f.Offset {
		b.skipped++
		return
	}
	b.page.Messages = append(b.page.Messages, browsed(pid, pr.label, m, st, groups))
}

// browsed is one stored message as a browse shows it.
func browsed(pid uuid.UUID, l *partitionLabel, m *store.Frame, status string, groups map[string]string) api.BrowsedMessage {
	return api.BrowsedMessage{
		ID: store.MessageID(pid, m.Offset), TransactionID: m.TxnID, TraceID: m.TraceID, PartitionID: pid.String(),
		QueuePath: l.queue + "/" + l.partition, Queue: l.queue, Partition: l.partition, Namespace: l.namespace,
		Task: l.task, Offset: m.Offset, Status: status, ConsumerGroups: groups, CreatedAt: m.CreatedAt,
		PayloadBytes: payloadBytes(m),
	}
}

// payloadBytes is the size of m's payload as JSON, sealed or not.
func payloadBytes(m *store.Frame) int {
	if m.Sealed {
		return seal.PlainLen(m.Payload)
	}
	return len(m.Payload)
}

// GetMessage finds a message by partition and transaction id, through the
// transaction id sidecar.
func (r *Reader) GetMessage(ctx context.Context, partitionID, txnID string) (*api.MessageDetail, error) {
	pid, err := uuid.Parse(partitionID)
	if err != nil {
		return nil, invalidf("partition id %q is not a UUID (the partitionId of a pushed or popped message)", partitionID)
	}
	if txnID == "" || len(txnID) > validate.IDMaxBytes {
		return nil, invalidf("transaction id must be 1 to %d bytes", validate.IDMaxBytes)
	}
	pr, err := r.loadReaders(ctx, pid)
	if err != nil {
		return nil, err
	}
	f, err := r.storedMessage(ctx, pid, txnID)
	if err != nil {
		return nil, err
	}
	var dead []string
	var errMsg string
	var retries int
	rows, err := r.pool.Query(ctx, `
		SELECT group_name, error, retry_count FROM lethe.dead_letters
		 WHERE partition_id = $1 AND msg_offset = $2 ORDER BY failed_at`, pid, f.Offset)
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
	st, groups := pr.status(f.Offset, f.CreatedAt, dead)
	return &api.MessageDetail{
		BrowsedMessage: browsed(pid, pr.label, f, st, groups),
		ProducerSub:    f.ProducerSub, Payload: f.Payload, ErrorMessage: errMsg, RetryCount: retries,
	}, nil
}

// storedMessage reads the message txnID of partition pid.
func (r *Reader) storedMessage(ctx context.Context, pid uuid.UUID, txnID string) (*store.Frame, error) {
	off, found, err := store.TxnOffset(ctx, r.pool, pid, txnID)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, notFoundf("no message with transaction id %q in partition %s (never pushed, or older than the deduplication window that keeps transaction ids)",
			txnID, pid)
	}
	f, found, err := store.ReadAt(ctx, r.pool, pid, off)
	if err != nil {
		return nil, err
	}
	if !found || f.Err == nil && f.TxnID != txnID {
		return nil, notFoundf("message %q at offset %d of partition %s is no longer stored (removed by retention)", txnID, off, pid)
	}
	if f.Err == nil {
		var plain []byte
		if plain, f.Err = r.openPayload(&f); f.Err == nil {
			f.Payload, f.Sealed = plain, false
		}
	}
	if f.Err != nil || len(f.Payload) > 0 && !pushdec.Valid(f.Payload) {
		return nil, fmt.Errorf("%w: message %q at offset %d of partition %s is stored but unreadable: %v",
			apierr.Conflict, txnID, off, pid, cmp.Or[error](f.Err, errors.New("its payload is not JSON PostgreSQL can store"))) //nolint:errorlint // the kind is Conflict; the cause is told, not wrapped, so it cannot change the status
	}
	return &f, nil
}
