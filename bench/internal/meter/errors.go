package meter

import "sync/atomic"

// Errors counts a run's failures and keeps the first one's message, for the
// result's Errors and FirstError. Safe for concurrent use; the zero value
// is ready.
type Errors struct {
	n     atomic.Int64
	first atomic.Pointer[string]
}

// Note counts err and keeps its message when it is the first.
func (e *Errors) Note(err error) {
	e.n.Add(1)
	msg := err.Error()
	e.first.CompareAndSwap(nil, &msg)
}

// Count is how many were noted.
func (e *Errors) Count() int64 { return e.n.Load() }

// First is the first message noted, or "".
func (e *Errors) First() string {
	if p := e.first.Load(); p != nil {
		return *p
	}
	return ""
}
