package streams

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/validate"
)

// liveQuery is a registration as stored.
type liveQuery struct {
	id         uuid.UUID
	configHash string
}

// ResetGuard answers an error (forbidden, saying what to send) when the
// caller may not reset the live registration of query name, which drops
// its state; a nil ResetGuard lets every reset through.
type ResetGuard func(name string) error

// Register registers a streaming query over an existing source queue
// (else not found), idempotently: a name not
// registered is inserted (fresh); the same config hash keeps the
// registration and its state; a different one is refused (conflict) unless
// req.Reset, which retires the old registration (its state is purged by
// the retention loop) and registers the name afresh under a new id, once
// mayReset lets it.
func (s *Service) Register(ctx context.Context, req api.StreamQueryRequest, mayReset ResetGuard) (*api.StreamQueryResponse, error) {
	if err := checkRegistration(req); err != nil {
		return nil, err
	}
	// Two first registrations of a name at once: one insert wins the
	// unique index, the other is retried and finds it registered.
	for attempt := 0; ; attempt++ {
		var out *api.StreamQueryResponse
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var err error
			out, err = s.register(ctx, tx, req, mayReset, s.clock.Now())
			return err
		})
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" && attempt < 3 {
			continue
		}
		if errors.As(err, &pgErr) && pgErr.Code == "23505" {
			return nil, apierr.New(apierr.Conflict, "query %q is being registered concurrently; retry", req.Name)
		}
		return out, err
	}
}

func checkRegistration(req api.StreamQueryRequest) error {
	if err := validate.Name("name", req.Name); err != nil {
		return err
	}
	if err := validate.Name("source_queue", req.SourceQueue); err != nil {
		return err
	}
	if err := validate.OptionalName("sink_queue", req.SinkQueue); err != nil {
		return err
	}
	return validate.RequiredID("config_hash", req.ConfigHash)
}

func (s *Service) register(ctx context.Context, tx pgx.Tx, req api.StreamQueryRequest, mayReset ResetGuard, now time.Time) (*api.StreamQueryResponse, error) {
	out := &api.StreamQueryResponse{Success: true, Name: req.Name, ConfigHash: req.ConfigHash}
	if err := checkSourceQueue(ctx, tx, req.SourceQueue); err != nil {
		return nil, err
	}
	old, found, err := lockLive(ctx, tx, req.Name)
	if err != nil {
		return nil, err
	}
	switch {
	case found && old.configHash == req.ConfigHash:
		out.QueryID = old.id.String()
		_, err = tx.Exec(ctx, `UPDATE lethe.stream_queries SET source_queue = $2, sink_queue = $3, updated_at = $4
			WHERE id = $1`, old.id, req.SourceQueue, nullable(req.SinkQueue), now)
		return out, wrap(err, "update query %s", req.Name)
	case found && !req.Reset:
		return nil, apierr.New(apierr.Conflict, "config_hash mismatch: operator chain changed for queryId '%s'. "+
			"Pass reset:true to wipe existing state, or use a new queryId.", req.Name)
	case found:
		if mayReset != nil {
			if err := mayReset(req.Name); err != nil {
				return nil, err
			}
		}
		if err := retire(ctx, tx, old.id, "reset", now); err != nil {
			return nil, err
		}
		out.Reset = true
	default:
		out.Fresh = true
	}
	id := uuid.New()
	out.QueryID = id.String()
	_, err = tx.Exec(ctx, `INSERT INTO lethe.stream_queries (id, name, source_queue, sink_queue, config_hash, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)`, id, req.Name, req.SourceQueue, nullable(req.SinkQueue), req.ConfigHash, now)
	return out, wrap(err, "register query %s", req.Name)
}

// checkSourceQueue answers not found, naming source_queue, unless the
// queue exists: a query over a misspelt queue would otherwise wait for
// messages that never come.
func checkSourceQueue(ctx context.Context, tx pgx.Tx, queue string) error {
	var found bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM lethe.queues WHERE name = $1)`, queue).Scan(&found)
	switch {
	case err != nil:
		return wrap(err, "look up queue %s", queue)
	case !found:
		return apierr.Field(apierr.NotFound, "source_queue", "source_queue %q does not exist; create it "+
			"(POST /api/v1/configure, or a first push) before registering a query over it", queue)
	}
	return nil
}

// lockLive locks the live registration of name, if any: cycles of the
// query hold it FOR SHARE, so a reset waits for them and they, after it,
// see the query retired.
func lockLive(ctx context.Context, tx pgx.Tx, name string) (liveQuery, bool, error) {
	var q liveQuery
	err := tx.QueryRow(ctx, `SELECT id, config_hash FROM lethe.stream_queries
		WHERE name = $1 AND retired_at IS NULL FOR UPDATE`, name).Scan(&q.id, &q.configHash)
	if errors.Is(err, pgx.ErrNoRows) {
		return q, false, nil
	}
	return q, err == nil, wrap(err, "look up query %s", name)
}

func retire(ctx context.Context, tx pgx.Tx, id uuid.UUID, why string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE lethe.stream_queries SET retired_at = $2, retired_why = $3, updated_at = $2
		WHERE id = $1`, id, now, why)
	return wrap(err, "retire query %s", id)
}

// Remove retires the live registration of name: its state is purged by the
// retention loop, in bounded steps, and cycles naming its id are refused.
func (s *Service) Remove(ctx context.Context, name string) (*api.StreamQueryRemoved, error) {
	if err := validate.Name("name", name); err != nil {
		return nil, err
	}
	out := &api.StreamQueryRemoved{Success: true, Name: name}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		old, found, err := lockLive(ctx, tx, name)
		if err != nil {
			return err
		}
		if !found {
			return apierr.New(apierr.NotFound, "no streaming query named %q is registered", name)
		}
		out.QueryID = old.id.String()
		err = tx.QueryRow(ctx, `SELECT count(*) FROM lethe.stream_state WHERE query_id = $1`, old.id).Scan(&out.StateKeys)
		if err != nil {
			return wrap(err, "count state of %s", name)
		}
		return retire(ctx, tx, old.id, "removed", s.clock.Now())
	})
	return out, err
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// wrap adds context to err; nil stays nil.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("streams: %s: %w", fmt.Sprintf(format, args...), err)
}
