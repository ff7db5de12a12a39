package engine

import (
	"context"
	"fmt"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/frame"
	"github.com/lethe-mq/lethe/internal/store"
)

// pushQueues loads the options of every queue items push to. A queue that
// does not exist yet is absent: it is created with the defaults (no
// encryption, no maxSize).
func (e *Engine) pushQueues(ctx context.Context, items []api.PushItem) (map[string]*Queue, error) {
	out := map[string]*Queue{}
	for _, it := range items {
		if _, seen := out[it.Queue]; seen || it.Queue == "" {
			continue
		}
		q, err := e.catalog.queue(ctx, it.Queue)
		if err != nil {
			return nil, err
		}
		out[it.Queue] = q
	}
	return out, nil
}

// sealFor seals m's payload when q is encrypted. Without a key the push is
// refused: storing the payload in clear would break the queue's promise.
func (e *Engine) sealFor(q *Queue, m *frame.Message) error {
	if q == nil || !q.Encrypted {
		return nil
	}
	if !e.cfg.Keys.On() {
		return fmt.Errorf("%w: queue %q has encryptionEnabled, but this server has no QUEEN_ENCRYPTION_KEY, so nothing was written: "+
			"set the same key (64 hexadecimal characters) on every replica, or turn encryption off for the queue", ErrConflict, q.Name)
	}
	sealed, err := e.cfg.Keys.Seal(nil, m.Payload)
	if err != nil {
		return fmt.Errorf("seal a payload of %s: %w", q.Name, err)
	}
	m.Payload, m.Sealed = sealed, true
	return nil
}

// checkCapacity refuses, whole, a push that would take a queue with a
// maxSize past it: as in Queen, a queue's size is the messages stored and
// not yet consumed in queue mode. The check reads before the write, so
// pushes checked at the same moment can pass it together by their own
// sizes.
func (e *Engine) checkCapacity(ctx context.Context, queues map[string]*Queue, items []prepared) error {
	adding := map[string]int{}
	for _, p := range items {
		if p.claimed == nil { // a claimed item adds nothing
			adding[p.item.Queue]++
		}
	}
	for name, n := range adding {
		q := queues[name]
		if q == nil || q.MaxSize <= 0 {
			continue
		}
		depth, err := e.queueDepth(ctx, q)
		if err != nil {
			return err
		}
		if depth+int64(n) > int64(q.MaxSize) {
			return fmt.Errorf("%w: queue %q is full: maxSize %d, %d messages waiting (stored and not consumed in queue mode), "+
				"this push adds %d; nothing was written", ErrConflict, name, q.MaxSize, depth, n)
		}
	}
	return nil
}

// queueDepth counts the messages of q stored past the queue-mode cursor.
func (e *Engine) queueDepth(ctx context.Context, q *Queue) (int64, error) {
	n, err := store.QueueDepth(ctx, e.pool, q.ID, api.QueueModeGroup)
	if err != nil {
		return 0, fmt.Errorf("size of queue %s: %w", q.Name, err)
	}
	return n, nil
}

// openPayload is f's payload as JSON: opened when it is sealed.
func (e *Engine) openPayload(f *store.Frame) ([]byte, error) {
	if !f.Sealed {
		return f.Payload, nil
	}
	plain, err := e.cfg.Keys.Open(f.Payload)
	if err != nil {
		return nil, fmt.Errorf("encrypted payload cannot be opened: %w", err)
	}
	return plain, nil
}

// needKey refuses a pop of an encrypted queue on a server without a key: it
// could open nothing it delivers.
func (e *Engine) needKey(q *Queue) error {
	if q.Encrypted && !e.cfg.Keys.On() {
		return fmt.Errorf("%w: queue %q has encryptionEnabled, but this server has no QUEEN_ENCRYPTION_KEY to open its messages: "+
			"set the same key (64 hexadecimal characters) on every replica", ErrConflict, q.Name)
	}
	return nil
}
