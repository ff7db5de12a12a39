package engine

import "github.com/lethe-mq/lethe/internal/seal"

// Keys returns the keys the engine seals and opens payloads with (nil:
// none), for the read models that open stored payloads.
func (e *Engine) Keys() *seal.Keys { return e.cfg.Keys }

// Hooks returns the engine's observability callbacks, for the read models
// that count what they could not read.
func (e *Engine) Hooks() Hooks { return e.cfg.Hooks }
