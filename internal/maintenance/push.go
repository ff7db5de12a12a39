package maintenance

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/api"
	"github.com/lethe-mq/lethe/internal/engine"
)

// maxIDLen is the engine's limit on transaction and trace ids.
const maxIDLen = 512

// Buffer stores items durably (fsync before it answers) and answers each as
// buffered with its transaction id, generated when absent so that the
// replay is idempotent. Items the engine would refuse are refused now, all
// of them, as a push would be.
func (s *Service) Buffer(ctx context.Context, items []api.PushItem) ([]api.PushResult, error) {
	if err := s.validate(items); err != nil {
		return nil, err
	}
	items = slices.Clone(items)
	var data []byte
	for i := range items {
		if items[i].TransactionID == "" {
			items[i].TransactionID = uuid.NewString()
		}
		line, err := json.Marshal(items[i])
		if err != nil {
			return nil, fmt.Errorf("maintenance buffer: encode item %d: %w", i, err)
		}
		data = append(append(data, line...), '\n')
	}
	s.buf.mu.Lock()
	if !s.push.Load() {
		// Maintenance ended while this request waited for the file: the
		// replay owns it now, so go straight to the database.
		s.buf.mu.Unlock()
		return s.eng.Push(ctx, items, "")
	}
	err := s.buf.appendLocked(data, len(items))
	s.buf.mu.Unlock()
	if err != nil {
		s.healthy.Store(false)
		return nil, fmt.Errorf("maintenance buffer: %w", err)
	}
	results := make([]api.PushResult, len(items))
	for i, it := range items {
		results[i] = api.PushResult{
			Index:              i,
			TransactionID:      it.TransactionID,
			TransactionIDCamel: it.TransactionID,
			Status:             api.StatusBuffered,
			TraceID:            it.TraceID,
			QueueName:          it.Queue,
		}
	}
	return results, nil
}

// validate applies the engine's push checks, so nothing lands in the
// buffer that the replay would have to reject.
func (s *Service) validate(items []api.PushItem) error {
	if len(items) == 0 {
		return fmt.Errorf("%w: items must hold at least one message", engine.ErrInvalid)
	}
	if len(items) > engine.MaxItemsDefault {
		return fmt.Errorf("%w: %d items in one push; the limit is %d", engine.ErrInvalid, len(items), engine.MaxItemsDefault)
	}
	for i, it := range items {
		if err := engine.ValidateName(fmt.Sprintf("items[%d].queue", i), it.Queue); err != nil {
			return err
		}
		if it.Partition != "" {
			if err := engine.ValidateName(fmt.Sprintf("items[%d].partition", i), it.Partition); err != nil {
				return err
			}
		}
		if len(it.Payload) > s.cfg.MaxPayloadBytes {
			return fmt.Errorf("%w: items[%d].payload is %d bytes; the limit is %d (MAX_PAYLOAD_BYTES)",
				engine.ErrTooLarge, i, len(it.Payload), s.cfg.MaxPayloadBytes)
		}
		if len(it.Payload) > 0 && !json.Valid(it.Payload) {
			return fmt.Errorf("%w: items[%d].payload is not valid JSON", engine.ErrInvalid, i)
		}
		if len(it.TransactionID) > maxIDLen || len(it.TraceID) > maxIDLen {
			return fmt.Errorf("%w: items[%d]: transactionId and traceId are limited to %d bytes", engine.ErrInvalid, i, maxIDLen)
		}
	}
	return nil
}
