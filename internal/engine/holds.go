package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
)

// maxHoldReason bounds a hold's reason, in bytes (the table checks it too).
const maxHoldReason = 1024

// A retention hold stops every deletion of a queue's messages until it is
// released (migration 154 enforces it in the rules' SQL: cutoffs, the
// consumed bound the tiers read, the queue's deletion); the engine also
// refuses deleting the queue or its dead letters before anything goes.

const holdColumns = `id, queue_name, reason, placed_at, placed_by, released_at, released_by`

func scanHold(row pgx.Row) (*api.RetentionHold, error) {
	h := &api.RetentionHold{}
	err := row.Scan(&h.ID, &h.Queue, &h.Reason, &h.PlacedAt, &h.PlacedBy, &h.ReleasedAt, &h.ReleasedBy)
	if err != nil {
		return nil, err
	}
	h.Active = h.ReleasedAt == nil
	h.PlacedAt = h.PlacedAt.UTC()
	if h.ReleasedAt != nil {
		t := h.ReleasedAt.UTC()
		h.ReleasedAt = &t
	}
	return h, nil
}

// PlaceHold puts queue under a hold, for reason, placed by by.
func (e *Engine) PlaceHold(ctx context.Context, queue, reason, by string) (*api.RetentionHold, error) {
	if err := ValidateName("queue", queue); err != nil {
		return nil, err
	}
	reason = strings.TrimSpace(reason)
	if reason == "" || len(reason) > maxHoldReason || !utf8.ValidString(reason) {
		return nil, invalidf("reason must say why the queue is held, in 1 to %d bytes of UTF-8 text", maxHoldReason)
	}
	h, err := scanHold(e.pool.QueryRow(ctx, `
		INSERT INTO lethe.retention_holds (queue_id, queue_name, reason, placed_at, placed_by)
		SELECT q.id, q.name, $2, $3, $4 FROM lethe.queues q WHERE q.name = $1
		RETURNING `+holdColumns, queue, reason, e.clock.Now(), by))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFoundf("queue %q does not exist", queue)
	}
	if err != nil {
		return nil, fmt.Errorf("hold queue %s: %w", queue, err)
	}
	e.log.Warn("retention hold placed: nothing of the queue is deleted until it is released",
		"queue", queue, "hold", h.ID, "by", by, "reason", reason)
	return h, nil
}

// ReleaseHold ends hold id; the queue's rules apply again from the next
// cycle on (unless another hold stands).
func (e *Engine) ReleaseHold(ctx context.Context, id int64, by string) (*api.RetentionHold, error) {
	h, err := scanHold(e.pool.QueryRow(ctx, `
		UPDATE lethe.retention_holds SET released_at = $2, released_by = $3
		 WHERE id = $1 AND released_at IS NULL
		RETURNING `+holdColumns, id, e.clock.Now(), by))
	if errors.Is(err, pgx.ErrNoRows) {
		var released bool
		if err := e.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM lethe.retention_holds WHERE id = $1)`, id).Scan(&released); err != nil {
			return nil, fmt.Errorf("release hold %d: %w", id, err)
		}
		if released {
			return nil, fmt.Errorf("%w: hold %d is already released", ErrConflict, id)
		}
		return nil, notFoundf("hold %d does not exist (GET /api/v1/retention/holds lists them)", id)
	}
	if err != nil {
		return nil, fmt.Errorf("release hold %d: %w", id, err)
	}
	e.log.Warn("retention hold released: the queue's rules apply again", "queue", h.Queue, "hold", id, "by", by)
	return h, nil
}

// Holds lists holds, newest first: the active ones, or all with released;
// of one queue when queue is set.
func (e *Engine) Holds(ctx context.Context, queue string, released bool) ([]api.RetentionHold, error) {
	rows, err := e.pool.Query(ctx, `SELECT `+holdColumns+` FROM lethe.retention_holds
		 WHERE ($1 = '' OR queue_name = $1) AND ($2 OR released_at IS NULL)
		 ORDER BY id DESC LIMIT 1000`, queue, released)
	if err != nil {
		return nil, fmt.Errorf("list retention holds: %w", err)
	}
	defer rows.Close()
	out := []api.RetentionHold{}
	for rows.Next() {
		h, err := scanHold(rows)
		if err != nil {
			return nil, fmt.Errorf("list retention holds: %w", err)
		}
		out = append(out, *h)
	}
	return out, rows.Err()
}

// refuseHeld answers a conflict naming the holds when queue id qid is held.
func (e *Engine) refuseHeld(ctx context.Context, qid int64, what string) error {
	var ids []int64
	if err := e.pool.QueryRow(ctx, `SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM lethe.retention_holds
		 WHERE queue_id = $1 AND released_at IS NULL`, qid).Scan(&ids); err != nil {
		return fmt.Errorf("%s: read its holds: %w", what, err)
	}
	if len(ids) > 0 {
		return fmt.Errorf("%w: %s: the queue is under retention hold %v; release it first (DELETE /api/v1/retention/holds/{id})",
			ErrConflict, what, ids)
	}
	return nil
}
