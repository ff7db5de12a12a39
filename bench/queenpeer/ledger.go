package main

import (
	"sync"

	"github.com/lethe-mq/lethe/bench/internal/lethebench"
)

// ledger checks delivery: every transaction id pushed must be acked once.
// The ids are made here (UUIDv7, unique across partitions), so an id alone
// names a message.
type ledger struct {
	mu      sync.Mutex
	acked   map[string]int // pushed id -> times acked
	dups    int64          // acks of an id acked before
	unknown int64          // acks of an id never pushed
}

// tally is what the ledger holds at the end of a run.
type tally struct {
	Pushed     int   `json:"pushed"`
	Delivered  int   `json:"delivered_once"`
	Missing    int   `json:"missing"`
	Duplicates int64 `json:"duplicates"`
	Unknown    int64 `json:"unknown"`
}

func newLedger(n int) *ledger { return &ledger{acked: make(map[string]int, n)} }

// pushed records ids whose push the server accepted. A retried batch
// records its ids again, which changes nothing.
func (l *ledger) pushed(ids []string) {
	l.mu.Lock()
	for _, id := range ids {
		if _, ok := l.acked[id]; !ok {
			l.acked[id] = 0
		}
	}
	l.mu.Unlock()
}

// delivered records messages the server acknowledged an ack of.
func (l *ledger) delivered(msgs []lethebench.Message) {
	l.mu.Lock()
	for _, m := range msgs {
		n, ok := l.acked[m.TransactionID]
		switch {
		case !ok:
			l.unknown++
		case n > 0:
			l.dups++
		}
		if ok {
			l.acked[m.TransactionID] = n + 1
		}
	}
	l.mu.Unlock()
}

func (l *ledger) tally() tally {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := tally{Pushed: len(l.acked), Duplicates: l.dups, Unknown: l.unknown}
	for _, n := range l.acked {
		if n == 0 {
			t.Missing++
		} else {
			t.Delivered++
		}
	}
	return t
}

// complete is whether want messages were pushed and each delivered once.
func (t tally) complete(want int) bool {
	return t.Pushed == want && t.Delivered == want && t.Duplicates == 0 && t.Unknown == 0
}
