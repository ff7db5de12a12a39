package streams

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/validate"
)

// stateWrites is a cycle's state ops reduced to their effect: the last op
// on a key wins, as applying them in order would.
type stateWrites struct {
	upsertKeys, upsertValues []string
	deleteKeys               []string
}

// planState checks ops and reduces them; keys come out sorted, so
// concurrent cycles lock rows in one order.
func planState(ops []api.StreamStateOp) (stateWrites, error) {
	var w stateWrites
	if err := validate.List("state_ops", len(ops), validate.StateOpsMax); err != nil {
		return w, err
	}
	last := map[string]int{}
	for i, op := range ops {
		field := fmt.Sprintf("state_ops[%d]", i)
		if op.Type != "upsert" && op.Type != "delete" {
			return w, apierr.Field(apierr.Invalid, field+".type", "%s.type must be \"upsert\" or \"delete\", got %q", field, op.Type)
		}
		if err := validate.StateKey(field+".key", op.Key); err != nil {
			return w, err
		}
		last[op.Key] = i
	}
	keys := make([]string, 0, len(last))
	for k := range last {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		op := ops[last[k]]
		if op.Type == "delete" {
			w.deleteKeys = append(w.deleteKeys, k)
			continue
		}
		v := string(op.Value)
		if len(op.Value) == 0 {
			v = "{}" // as Queen stores an upsert without a value
		}
		w.upsertKeys, w.upsertValues = append(w.upsertKeys, k), append(w.upsertValues, v)
	}
	return w, nil
}

// apply writes w as the state of (query, partition) inside tx, stamped now.
func (w stateWrites) apply(ctx context.Context, tx pgx.Tx, query, partition uuid.UUID, now time.Time) error {
	if len(w.deleteKeys) > 0 {
		_, err := tx.Exec(ctx, `DELETE FROM lethe.stream_state
			WHERE query_id = $1 AND partition_id = $2 AND key = ANY($3)`, query, partition, w.deleteKeys)
		if err != nil {
			return fmt.Errorf("streams: delete state of %s/%s: %w", query, partition, err)
		}
	}
	if len(w.upsertKeys) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO lethe.stream_state (query_id, partition_id, key, value, updated_at)
		SELECT $1, $2, u.k, u.v::jsonb, $5 FROM unnest($3::text[], $4::text[]) AS u(k, v) ORDER BY u.k
		ON CONFLICT (query_id, partition_id, key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
		query, partition, w.upsertKeys, w.upsertValues, now)
	if err != nil {
		return fmt.Errorf("streams: write state of %s/%s: %w", query, partition, err)
	}
	return nil
}
