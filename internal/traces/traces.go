// Package traces stores message traces (Queen's /api/v1/traces): events a
// consumer records against a message it processed, with names to find them
// by. Traces are kept RetentionDays by creation time; the Reclaimer purges
// older ones from the retention loop in bounded, audited steps.
package traces

import (
	"cmp"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/seal"
	"github.com/lethe-mq/lethe/internal/validate"
)

// Defaults and limits.
const (
	// RetentionDaysDefault is how long a trace is kept
	// (TRACES_RETENTION_DAYS).
	RetentionDaysDefault = 7
	// MaxPerMessage bounds the traces one message's read returns (oldest
	// first).
	MaxPerMessage = 10_000
	// EventTypeDefault is the event type of a trace that names none.
	EventTypeDefault = "info"
)

// Config wires a Service. Pool is required.
type Config struct {
	Pool  *pgxpool.Pool
	Clock clock.Clock
	// RetentionDays is how many calendar days a trace is kept.
	RetentionDays int
	// Keys open the sealed payloads of encrypted queues a trace read
	// shows (the engine's keys); nil: such payloads show as null.
	Keys *seal.Keys
	// PagePayloadBytes bounds the message payloads one page of traces
	// by name holds (0: validate.PagePayloadBytes; a page of 1,000 traces
	// of 4 MiB messages would otherwise hold 4 GiB).
	PagePayloadBytes int
}

// Service records and reads traces.
type Service struct {
	pool  *pgxpool.Pool
	clock clock.Clock
	cfg   Config
}

// New returns the service.
func New(cfg Config) *Service {
	cfg.Clock = cmp.Or[clock.Clock](cfg.Clock, clock.Real{})
	cfg.RetentionDays = cmp.Or(cfg.RetentionDays, RetentionDaysDefault)
	cfg.PagePayloadBytes = cmp.Or(cfg.PagePayloadBytes, validate.PagePayloadBytes)
	return &Service{pool: cfg.Pool, clock: cfg.Clock, cfg: cfg}
}

// timeFormat is how Queen writes a trace's time: UTC, milliseconds.
const timeFormat = "2006-01-02T15:04:05.000Z"
