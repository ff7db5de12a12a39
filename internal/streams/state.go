package streams

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/validate"
)

// State reads the state of one (query, partition), in key order, filtered
// by every filter given: the keys named, a key prefix (a plain prefix, no
// pattern), values whose numeric windowEnd is at or before
// ripe_at_or_before. A key nobody wrote is simply absent; a partition
// that does not exist is not found.
func (s *Service) State(ctx context.Context, req api.StreamStateRequest) (*api.StreamStateResponse, error) {
	query, partition, err := parseIDs(req.QueryID, req.PartitionID)
	if err != nil {
		return nil, err
	}
	ripe, err := checkStateFilters(req)
	if err != nil {
		return nil, err
	}
	if err := checkLive(ctx, s.pool, query, false); err != nil {
		return nil, err
	}
	if err := checkPartition(ctx, s.pool, partition, false); err != nil {
		return nil, err
	}
	keys := req.Keys
	if keys == nil {
		keys = []string{}
	}
	rows, err := s.pool.Query(ctx, `SELECT key, value::text, updated_at FROM lethe.stream_state
		 WHERE query_id = $1 AND partition_id = $2
		   AND (cardinality($3::text[]) = 0 OR key = ANY($3))
		   AND ($4 = '' OR starts_with(key, $4))
		   AND ($5::numeric IS NULL OR (jsonb_typeof(value->'windowEnd') = 'number'
		                                AND (value->>'windowEnd')::numeric <= $5::numeric))
		 ORDER BY key COLLATE "C"`, query, partition, keys, req.KeyPrefix, ripe)
	if err != nil {
		return nil, fmt.Errorf("streams: read state of %s/%s: %w", query, partition, err)
	}
	defer rows.Close()
	out := &api.StreamStateResponse{Success: true, Rows: []api.StreamStateRow{}}
	// The SDK reads all of a partition's state on each cycle, so a part of
	// it would be taken for the whole: a read past the bound is refused,
	// not cut.
	size := 0
	for rows.Next() {
		var r api.StreamStateRow
		var value string
		var at time.Time
		if err := rows.Scan(&r.Key, &value, &at); err != nil {
			return nil, fmt.Errorf("streams: read state of %s/%s: %w", query, partition, err)
		}
		if size += len(r.Key) + len(value); size > s.cfg.StateReadMaxBytes {
			return nil, apierr.Field(apierr.Invalid, "keys", "the state this read selects is over %d bytes; name keys or a key_prefix to read it in parts",
				s.cfg.StateReadMaxBytes)
		}
		r.Value, r.UpdatedAt = json.RawMessage(value), at.UTC().Format(time.RFC3339Nano)
		out.Rows = append(out.Rows, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("streams: read state of %s/%s: %w", query, partition, err)
	}
	return out, nil
}

// checkStateFilters checks a read's filters and answers ripe_at_or_before
// as SQL numeric text (nil when absent).
func checkStateFilters(req api.StreamStateRequest) (*string, error) {
	if err := validate.List("keys", len(req.Keys), validate.StateKeysMax); err != nil {
		return nil, err
	}
	for i, k := range req.Keys {
		if err := validate.StateKey(fmt.Sprintf("keys[%d]", i), k); err != nil {
			return nil, err
		}
	}
	if req.KeyPrefix != "" {
		if err := validate.StateKey("key_prefix", req.KeyPrefix); err != nil {
			return nil, err
		}
	}
	raw := string(req.RipeAtOrBefore)
	if raw == "" || raw == "null" {
		return nil, nil
	}
	var n json.Number
	if err := json.Unmarshal(req.RipeAtOrBefore, &n); err != nil || raw[0] == '"' || validate.NumberProblem([]byte(raw)) != "" {
		return nil, apierr.Field(apierr.Invalid, "ripe_at_or_before", "ripe_at_or_before must be a number (epoch ms), got %s", raw)
	}
	s := n.String()
	return &s, nil
}
