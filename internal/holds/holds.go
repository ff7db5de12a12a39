// Package holds is retention holds: an operator stops every deletion of a
// queue's messages until the hold is released. The rules enforce a hold in
// their own SQL (lethe.queue_held: cutoffs, the consumed bound the tiers
// read, the queue's deletion); this package places, releases and lists
// holds, and refuses the deletions a caller asks for while one stands
// (a queue, a dead letter) before anything goes. It owns the table
// lethe.retention_holds.
package holds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/store"
	"github.com/lethe-mq/lethe/internal/validate"
)

// MaxReason bounds a hold's reason, in bytes (the table checks it too).
const MaxReason = 1024

// DB is what holds runs its statements on: a pool, a connection or a
// transaction, as for the store.
type DB = store.Querier

// Service places, releases and lists holds.
type Service struct {
	db    DB
	clock clock.Clock
	log   *slog.Logger
}

// New is the holds over db, stamped by clk.
func New(db DB, clk clock.Clock, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{db: db, clock: clk, log: log}
}

const columns = `id, queue_name, reason, placed_at, placed_by, released_at, released_by`

func scan(row pgx.Row) (*api.RetentionHold, error) {
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

// Place puts queue under a hold, for reason, placed by by.
func (s *Service) Place(ctx context.Context, queue, reason, by string) (*api.RetentionHold, error) {
	if err := validate.Name("queue", queue); err != nil {
		return nil, err
	}
	reason = strings.TrimSpace(reason)
	if reason == "" || len(reason) > MaxReason || !utf8.ValidString(reason) {
		return nil, apierr.Field(apierr.Invalid, "reason", "reason must say why the queue is held, in 1 to %d bytes of UTF-8 text", MaxReason)
	}
	h, err := scan(s.db.QueryRow(ctx, `
		INSERT INTO lethe.retention_holds (queue_id, queue_name, reason, placed_at, placed_by)
		SELECT q.id, q.name, $2, $3, $4 FROM lethe.queues q WHERE q.name = $1
		RETURNING `+columns, queue, reason, s.clock.Now(), by))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, apierr.New(apierr.NotFound, "queue %q does not exist", queue)
	}
	if err != nil {
		return nil, fmt.Errorf("hold queue %s: %w", queue, err)
	}
	s.log.Warn("retention hold placed: nothing of the queue is deleted until it is released",
		"queue", queue, "hold", h.ID, "by", by, "reason", reason)
	return h, nil
}

// Release ends hold id; the queue's rules apply again from the next cycle
// on (unless another hold stands).
func (s *Service) Release(ctx context.Context, id int64, by string) (*api.RetentionHold, error) {
	h, err := scan(s.db.QueryRow(ctx, `
		UPDATE lethe.retention_holds SET released_at = $2, released_by = $3
		 WHERE id = $1 AND released_at IS NULL
		RETURNING `+columns, id, s.clock.Now(), by))
	if errors.Is(err, pgx.ErrNoRows) {
		var released bool
		if err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM lethe.retention_holds WHERE id = $1)`, id).Scan(&released); err != nil {
			return nil, fmt.Errorf("release hold %d: %w", id, err)
		}
		if released {
			return nil, apierr.New(apierr.Conflict, "hold %d is already released", id)
		}
		return nil, apierr.New(apierr.NotFound, "hold %d does not exist (GET /api/v1/retention/holds lists them)", id)
	}
	if err != nil {
		return nil, fmt.Errorf("release hold %d: %w", id, err)
	}
	s.log.Warn("retention hold released: the queue's rules apply again", "queue", h.Queue, "hold", id, "by", by)
	return h, nil
}

// List lists holds, newest first: the active ones, or all with released;
// of one queue when queue is set.
func (s *Service) List(ctx context.Context, queue string, released bool) ([]api.RetentionHold, error) {
	rows, err := s.db.Query(ctx, `SELECT `+columns+` FROM lethe.retention_holds
		 WHERE ($1 = '' OR queue_name = $1) AND ($2 OR released_at IS NULL)
		 ORDER BY id DESC LIMIT 1000`, queue, released)
	if err != nil {
		return nil, fmt.Errorf("list retention holds: %w", err)
	}
	defer rows.Close()
	out := []api.RetentionHold{}
	for rows.Next() {
		h, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("list retention holds: %w", err)
		}
		out = append(out, *h)
	}
	return out, rows.Err()
}

// RefuseHeld answers a conflict naming the holds when the queue of id qid
// is held, read through db (the caller's transaction, so the answer holds
// for what it deletes next).
func RefuseHeld(ctx context.Context, db DB, qid int64, what string) error {
	var ids []int64
	if err := db.QueryRow(ctx, `SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM lethe.retention_holds
		 WHERE queue_id = $1 AND released_at IS NULL`, qid).Scan(&ids); err != nil {
		return fmt.Errorf("%s: read its holds: %w", what, err)
	}
	if len(ids) > 0 {
		return apierr.New(apierr.Conflict, "%s: the queue is under retention hold %v; release it first (DELETE /api/v1/retention/holds/{id})",
			what, ids)
	}
	return nil
}
