package engine

import (
	"github.com/lethe-mq/lethe/internal/testsignal"
)

// TestSignals report the engine's background work to tests, which wait on
// them instead of sleeping. Each does nothing until Init.
type TestSignals struct {
	// Flushed reports each group-commit transaction that committed.
	Flushed testsignal.Signal[Flush]
	// Waiting reports a long poll starting to wait, with its first queue.
	Waiting testsignal.Signal[string]
	// Woken reports a local wake-up of the waiters on a queue.
	Woken testsignal.Signal[string]
}

// Flush is one group commit: how many partitions' segments and frames it
// wrote.
type Flush struct {
	Partitions int
	Frames     int
}

// Init arms every signal; call it before New.
func (s *TestSignals) Init() {
	s.Flushed.Init()
	s.Waiting.Init()
	s.Woken.Init()
}
