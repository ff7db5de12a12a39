package traces

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/store"
	"github.com/lethe-mq/lethe/internal/validate"
)

// Record stores a trace of the message transactionId of partition
// partitionId. The partition must exist; the message need not be found
// (its transaction-id hash may have aged out of the sidecar while the
// message is kept), and its offset is recorded when it is.
func (s *Service) Record(ctx context.Context, req api.TraceRequest) (*api.TraceRecorded, error) {
	pid, names, err := checkRecord(req)
	if err != nil {
		return nil, err
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM lethe.partitions WHERE id = $1)`, pid).Scan(&exists); err != nil {
		return nil, fmt.Errorf("traces: look up partition %s: %w", pid, err)
	}
	if !exists {
		return nil, apierr.Field(apierr.NotFound, "partitionId", "partition %s does not exist", pid)
	}
	var offset *int64
	if off, found, err := store.TxnOffset(ctx, s.pool, pid, req.TransactionID); err != nil {
		return nil, err
	} else if found {
		offset = &off
	}
	id := uuid.New()
	_, err = s.pool.Exec(ctx, `INSERT INTO lethe.traces (id, partition_id, transaction_id, msg_offset, consumer_group,
		event_type, data, names, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9)`,
		id, pid, req.TransactionID, offset, orDefault(req.ConsumerGroup, api.QueueModeGroup),
		orDefault(req.EventType, EventTypeDefault), string(req.Data), names, s.clock.Now())
	if err != nil {
		return nil, fmt.Errorf("traces: record a trace of %s/%s: %w", pid, req.TransactionID, err)
	}
	return &api.TraceRecorded{Success: true, TraceID: id.String()}, nil
}

// checkRecord checks a trace and answers its partition id and names.
func checkRecord(req api.TraceRequest) (uuid.UUID, []string, error) {
	if req.TransactionID == "" || req.PartitionID == "" {
		return uuid.Nil, nil, apierr.New(apierr.Invalid, "transactionId and partitionId are required")
	}
	if err := validate.ID("transactionId", req.TransactionID); err != nil {
		return uuid.Nil, nil, err
	}
	pid, err := uuid.Parse(req.PartitionID)
	if err != nil {
		return uuid.Nil, nil, apierr.Field(apierr.Invalid, "partitionId", "partitionId %q is not a partition id (the partitionId of a popped message)", req.PartitionID)
	}
	if len(req.Data) == 0 {
		return uuid.Nil, nil, apierr.Field(apierr.Invalid, "data", "data is required")
	}
	if err := validate.OptionalName("consumerGroup", req.ConsumerGroup); err != nil {
		return uuid.Nil, nil, err
	}
	if err := validate.ID("eventType", req.EventType); err != nil {
		return uuid.Nil, nil, err
	}
	names, err := traceNames(req.TraceNames)
	return pid, names, err
}

// traceNames reads traceNames: absent, null, one name or an array of
// names; duplicates count once.
func traceNames(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return []string{}, nil
	}
	var names []string
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		names = []string{one}
	} else if err := json.Unmarshal(raw, &names); err != nil {
		return nil, apierr.Field(apierr.Invalid, "traceNames", "traceNames must be a name or an array of names")
	}
	if err := validate.List("traceNames", len(names), validate.TraceNamesMax); err != nil {
		return nil, err
	}
	for i, n := range names {
		if err := validate.Name(fmt.Sprintf("traceNames[%d]", i), n); err != nil {
			return nil, err
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
