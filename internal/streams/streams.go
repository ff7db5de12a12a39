// Package streams serves Queen's streams API (/streams/v1): streaming
// queries registered by name and config hash, their per-(query, source
// partition, key) state, and cycles that write state, push to sink queues
// and ack the source in one PostgreSQL transaction (the engine's). Its
// Reclaimers purge the state of queries that were reset or removed, and
// keys no cycle has written for StateIdleDays, from the retention loop.
package streams

import (
	"cmp"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/validate"
)

// Defaults and limits.
const (
	// StateIdleDaysDefault is how long a state key may go unwritten before
	// it is purged (STREAMS_STATE_IDLE_DAYS).
	StateIdleDaysDefault = 30
)

// Config wires a Service. Engine is required.
type Config struct {
	Engine *engine.Engine
	// StateIdleDays is how many calendar days a key may go without a cycle
	// writing it before the retention loop purges it.
	StateIdleDays int
	// StateReadMaxBytes bounds what one state read answers, keys and
	// values (0: validate.PagePayloadBytes); past it the read answers 400,
	// never a cut list.
	StateReadMaxBytes int
}

// Service is the streams API of one replica.
type Service struct {
	eng   *engine.Engine
	pool  *pgxpool.Pool
	clock clock.Clock
	cfg   Config
}

// New returns the service.
func New(cfg Config) *Service {
	cfg.StateIdleDays = cmp.Or(cfg.StateIdleDays, StateIdleDaysDefault)
	cfg.StateReadMaxBytes = cmp.Or(cfg.StateReadMaxBytes, validate.PagePayloadBytes)
	return &Service{eng: cfg.Engine, pool: cfg.Engine.Pool(), clock: cfg.Engine.Clock(), cfg: cfg}
}
