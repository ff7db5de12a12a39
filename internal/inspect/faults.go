package inspect

import (
	"fmt"
	"sync"
	"time"

	"github.com/lethe-mq/lethe/internal/store"
)

// faults are what a browse could not read: unreadable frames and
// partitions whose stored data PostgreSQL refused. They are logged and
// counted once the page is answered (r.fire).
type faults struct {
	unread []unreadFault
	failed []partitionFault
}

type unreadFault struct {
	queue, partition string
	n                int
	err              error
}

type partitionFault struct {
	queue, partition, op string
	err                  error
}

func (f *faults) unreadable(queue, partition string, n int, err error) {
	f.unread = append(f.unread, unreadFault{queue, partition, n, err})
}

func (f *faults) partitionFailed(queue, partition, op string, err error) {
	f.failed = append(f.failed, partitionFault{queue, partition, op, err})
}

// fire logs and counts f.
func (r *Reader) fire(f *faults) {
	for _, u := range f.unread {
		r.log.Warn("stored messages are unreadable; a pop dead-letters them, a browse skips them",
			"queue", u.queue, "partition", u.partition, "messages", u.n, "error", u.err)
		if r.cfg.Unreadable != nil {
			r.cfg.Unreadable(u.queue, u.n)
		}
	}
	for _, p := range f.failed {
		if r.faults.due(p.queue+"\x00"+p.partition+"\x00"+p.op, r.clock.Now()) {
			r.log.Error("partition skipped: its stored state could not be served (logged once a minute per partition)",
				"queue", p.queue, "partition", p.partition, "op", p.op, "error", p.err)
		}
		if r.cfg.PartitionFailed != nil {
			r.cfg.PartitionFailed(p.queue, p.op)
		}
	}
}

// faultLog lets a repeated log line through once a minute per key.
type faultLog struct {
	mu   sync.Mutex
	last map[string]time.Time
}

func (t *faultLog) due(key string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if at, ok := t.last[key]; ok && now.Sub(at) < time.Minute && !now.Before(at) {
		return false
	}
	if t.last == nil || len(t.last) > 10_000 {
		t.last = map[string]time.Time{} // bounded; forgetting only logs again
	}
	t.last[key] = now
	return true
}

// openPayload opens a sealed payload of f.
func (r *Reader) openPayload(f *store.Frame) ([]byte, error) {
	if !f.Sealed {
		return f.Payload, nil
	}
	plain, err := r.cfg.Keys.Open(f.Payload)
	if err != nil {
		return nil, fmt.Errorf("encrypted payload cannot be opened: %w", err)
	}
	return plain, nil
}
