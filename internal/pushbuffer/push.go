package pushbuffer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/validate"
)

// Buffer stores items durably (fsync before it answers) and answers each as
// buffered with its transaction id, generated when absent so that the
// replay is idempotent. Items the engine would refuse are refused now, all
// of them, as a push would be.
func (s *Service) Buffer(ctx context.Context, items []api.PushItem) ([]api.PushResult, error) {
	lim := validate.PushLimits{MaxItems: engine.MaxItemsDefault, MaxPayloadBytes: s.cfg.MaxPayloadBytes}
	if err := validate.PushItems(items, lim, false); err != nil {
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
