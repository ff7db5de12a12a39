// Package inspect is lethe's read models: the server overview, queue and
// partition status, consumer groups and their lag, the message browser,
// dead-letter listing, the database's statistics, and of retention the
// audit history, the analytics series and the tier view. It only reads; the
// log's writes (push, pop, ack, seek, replay) are the engine's. Its answers
// are the wire types of package api, which the server, the CLI and the Go
// client share. Stored frames are read through internal/store; lag is the
// view lethe.group_lag (migration 100), which Prometheus reads too.
package inspect

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/seal"
)

// Config wires a Reader. Pool is required; the rest may be zero.
type Config struct {
	Pool   *pgxpool.Pool
	Clock  clock.Clock
	Logger *slog.Logger
	// Keys open sealed payloads (an encrypted queue's messages and dead
	// letters); nil opens none.
	Keys *seal.Keys
	// QueueOptions returns a queue's options as the API shows them (the
	// engine's reading of them), or apierr.NotFound.
	QueueOptions func(ctx context.Context, queue string) (any, error)
	// Unreadable counts stored messages a browse skipped because they could
	// not be decoded; PartitionFailed a partition a browse could not read.
	Unreadable      func(queue string, n int)
	PartitionFailed func(queue, op string)
}

// Reader answers the read models. It is safe for concurrent use.
type Reader struct {
	pool   *pgxpool.Pool
	clock  clock.Clock
	log    *slog.Logger
	cfg    Config
	faults faultLog
}

// New returns a Reader over cfg.Pool.
func New(cfg Config) *Reader {
	cfg.Clock = cmp.Or[clock.Clock](cfg.Clock, clock.Real{})
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	return &Reader{pool: cfg.Pool, clock: cfg.Clock, log: cfg.Logger, cfg: cfg}
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", apierr.Invalid, fmt.Sprintf(format, args...))
}

func notFoundf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", apierr.NotFound, fmt.Sprintf(format, args...))
}

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
