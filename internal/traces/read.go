package traces

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/store"
	"github.com/lethe-mq/lethe/internal/validate"
)

// ForMessage answers the traces of one message, oldest first (at most
// MaxPerMessage).
func (s *Service) ForMessage(ctx context.Context, partitionID, transactionID string) (*api.MessageTraces, error) {
	pid, err := uuid.Parse(partitionID)
	if err != nil {
		return nil, apierr.Field(apierr.Invalid, "partitionId", "partitionId %q is not a partition id", partitionID)
	}
	if err := validate.RequiredID("transactionId", transactionID); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT id, event_type, data::text, consumer_group, worker_id, created_at, names
		  FROM lethe.traces WHERE partition_id = $1 AND transaction_id = $2
		 ORDER BY created_at, id LIMIT $3`, pid, transactionID, MaxPerMessage)
	if err != nil {
		return nil, fmt.Errorf("traces: read traces of %s/%s: %w", pid, transactionID, err)
	}
	out := &api.MessageTraces{Traces: []api.Trace{}}
	for rows.Next() {
		var t api.Trace
		var data string
		var at time.Time
		if err := rows.Scan(&t.ID, &t.EventType, &data, &t.ConsumerGroup, &t.WorkerID, &at, &t.TraceNames); err != nil {
			rows.Close()
			return nil, fmt.Errorf("traces: read traces of %s/%s: %w", pid, transactionID, err)
		}
		t.Data, t.CreatedAt = json.RawMessage(data), at.UTC().Format(timeFormat)
		out.Traces = append(out.Traces, t)
	}
	return out, wrapRows(rows.Err(), "read traces of %s/%s", pid, transactionID)
}

// ByName answers a page of the traces named name, oldest first, with each
// message's queue, partition and payload (null once the message is gone).
func (s *Service) ByName(ctx context.Context, name string, page api.Pagination) (*api.TracesByName, error) {
	if err := validate.Name("traceName", name); err != nil {
		return nil, err
	}
	out := &api.TracesByName{Traces: []api.Trace{}, Pagination: page}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM lethe.traces WHERE names @> ARRAY[$1]`, name).Scan(&out.Total); err != nil {
			return err
		}
		offsets, err := s.namedPage(ctx, tx, name, page, out)
		if err != nil {
			return err
		}
		return s.payloads(ctx, tx, out, offsets)
	})
	if err != nil {
		return nil, fmt.Errorf("traces: read traces named %q: %w", name, err)
	}
	return out, nil
}

// namedPage reads the page's traces into out and answers each one's
// message offset (nil when unknown).
func (s *Service) namedPage(ctx context.Context, tx pgx.Tx, name string, page api.Pagination, out *api.TracesByName) ([]*int64, error) {
	rows, err := tx.Query(ctx, `SELECT t.id, t.transaction_id, t.partition_id, t.event_type, t.data::text, t.consumer_group,
		       t.worker_id, t.created_at, t.names, q.name, p.name, t.msg_offset
		  FROM lethe.traces t
		  LEFT JOIN lethe.partitions p ON p.id = t.partition_id
		  LEFT JOIN lethe.queues q ON q.id = p.queue_id
		 WHERE t.names @> ARRAY[$1]
		 ORDER BY t.created_at, t.id LIMIT $2 OFFSET $3`, name, page.Limit, page.Offset)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var offsets []*int64
	for rows.Next() {
		var t api.Trace
		var data string
		var at time.Time
		var off *int64
		if err := rows.Scan(&t.ID, &t.TransactionID, &t.PartitionID, &t.EventType, &data, &t.ConsumerGroup,
			&t.WorkerID, &at, &t.TraceNames, &t.QueueName, &t.PartitionName, &off); err != nil {
			return nil, err
		}
		t.Data, t.CreatedAt = json.RawMessage(data), at.UTC().Format(timeFormat)
		t.MessagePayload = json.RawMessage("null")
		out.Traces = append(out.Traces, t)
		offsets = append(offsets, off)
	}
	return offsets, rows.Err()
}

// payloads fills in the payload of each trace's message still stored,
// opened when an encrypted queue sealed it; one that cannot be opened (no
// key for it) stays null, like a message gone. Once the payloads filled
// reach the page's bound the rest stay null and the page says
// PayloadsTruncated.
func (s *Service) payloads(ctx context.Context, tx pgx.Tx, out *api.TracesByName, offsets []*int64) error {
	var bytes int
	for i, off := range offsets {
		if off == nil {
			continue
		}
		if bytes >= s.cfg.PagePayloadBytes {
			out.PayloadsTruncated = true
			return nil
		}
		pid, err := uuid.Parse(out.Traces[i].PartitionID)
		if err != nil {
			return err
		}
		f, found, err := store.ReadAt(ctx, tx, pid, *off)
		if err != nil {
			return err
		}
		if !found || f.Err != nil {
			continue
		}
		payload := f.Payload
		if f.Sealed {
			if payload, err = s.cfg.Keys.Open(f.Payload); err != nil {
				continue
			}
		} else {
			payload = slices.Clone(payload) // not the whole segment it was read with
		}
		if json.Valid(payload) {
			out.Traces[i].MessagePayload = json.RawMessage(payload)
			bytes += len(payload)
		}
	}
	return nil
}

// Names answers a page of the trace names in use, most recently seen
// first, with how many traces and messages carry each.
func (s *Service) Names(ctx context.Context, page api.Pagination) (*api.TraceNames, error) {
	out := &api.TraceNames{TraceNames: []api.TraceNameStat{}, Pagination: page}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(DISTINCT n) FROM lethe.traces, unnest(names) AS n`).Scan(&out.Total); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT n, count(*), count(DISTINCT (t.partition_id, t.transaction_id)), max(t.created_at)
			  FROM lethe.traces t, unnest(t.names) AS n
			 GROUP BY n ORDER BY max(t.created_at) DESC, n LIMIT $1 OFFSET $2`, page.Limit, page.Offset)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var st api.TraceNameStat
			var at time.Time
			if err := rows.Scan(&st.TraceName, &st.TraceCount, &st.MessageCount, &at); err != nil {
				return err
			}
			st.LastSeen = at.UTC().Format(timeFormat)
			out.TraceNames = append(out.TraceNames, st)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("traces: list trace names: %w", err)
	}
	return out, nil
}

func wrapRows(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("traces: %s: %w", fmt.Sprintf(format, args...), err)
}
