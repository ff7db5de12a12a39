package engine

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// notifyChannel is the Postgres channel that tells other replicas a queue
// got messages, so their long polls wake too.
const notifyChannel = "lethe_push"

// notifyDebounce batches cross-replica notifications: NOTIFY serializes
// committing transactions on a global lock, so it must stay off the push
// path. A remote long poll wakes at most this much later.
const notifyDebounce = 5 * time.Millisecond

// notifier wakes long polls: local waiters directly, other replicas through
// LISTEN/NOTIFY sent from a background goroutine. A push wakes one waiter
// per consumer group of the queue, the one waiting longest: only one
// consumer of a group can take a partition's new messages, and waking them
// all made every push cost a pop per idle consumer. A woken waiter that
// finds nothing goes back to waiting; the others still re-poll every second.
type notifier struct {
	pool  *pgxpool.Pool
	log   *slog.Logger
	woken func(queue string) // a test signal

	mu      sync.Mutex
	seq     uint64
	waiters map[string]map[chan struct{}]waiter
	outbox  map[string]struct{}
	kick    chan struct{}
}

type waiter struct {
	group string
	since uint64 // order of arrival: the longest waiting is woken first
}

func newNotifier(pool *pgxpool.Pool, log *slog.Logger, woken func(queue string)) *notifier {
	return &notifier{
		pool:    pool,
		log:     log,
		woken:   woken,
		waiters: map[string]map[chan struct{}]waiter{},
		outbox:  map[string]struct{}{},
		kick:    make(chan struct{}, 1),
	}
}

// subscribe returns a channel that receives after a push to any of queues
// picks this waiter of group.
func (n *notifier) subscribe(group string, queues ...string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	n.mu.Lock()
	n.seq++
	w := waiter{group: group, since: n.seq}
	for _, q := range queues {
		if n.waiters[q] == nil {
			n.waiters[q] = map[chan struct{}]waiter{}
		}
		n.waiters[q][ch] = w
	}
	n.mu.Unlock()
	return ch, func() {
		n.mu.Lock()
		for _, q := range queues {
			delete(n.waiters[q], ch)
			if len(n.waiters[q]) == 0 {
				delete(n.waiters, q)
			}
		}
		n.mu.Unlock()
	}
}

// notify wakes local waiters on queue and schedules a NOTIFY for the others.
func (n *notifier) notify(queue string) {
	n.wakeLocal(queue)
	n.mu.Lock()
	n.outbox[queue] = struct{}{}
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// wakeLocal wakes the longest-waiting waiter of each group on queue.
func (n *notifier) wakeLocal(queue string) {
	defer n.woken(queue)
	n.mu.Lock()
	defer n.mu.Unlock()
	pick := map[string]chan struct{}{}
	since := map[string]uint64{}
	for ch, w := range n.waiters[queue] {
		if len(ch) > 0 {
			continue // already woken, not yet gone: pick another
		}
		if cur, ok := since[w.group]; !ok || w.since < cur {
			pick[w.group], since[w.group] = ch, w.since
		}
	}
	for _, ch := range pick {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// listen runs until ctx ends: it LISTENs for other replicas' pushes.
// Connection failures are retried; long polls also re-check on a timer, so
// a lost notification only delays a wake-up.
func (n *notifier) listen(ctx context.Context) {
	for ctx.Err() == nil {
		if err := n.listenOnce(ctx); err != nil && ctx.Err() == nil {
			n.log.Warn("push listener lost its connection; retrying", "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

func (n *notifier) listenOnce(ctx context.Context) error {
	conn, err := n.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection ends up in LISTEN state: take it out of the pool for
	// good rather than give it back.
	pc := conn.Hijack()
	defer pc.Close(context.Background())
	if _, err := pc.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	for {
		msg, err := pc.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		n.wakeLocal(msg.Payload)
	}
}

// sendLoop runs until ctx ends: it sends the NOTIFYs of this replica's
// pushes, debounced.
func (n *notifier) sendLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.kick:
		}
		time.Sleep(notifyDebounce)
		n.mu.Lock()
		queues := make([]string, 0, len(n.outbox))
		for q := range n.outbox {
			queues = append(queues, q)
		}
		n.outbox = map[string]struct{}{}
		n.mu.Unlock()
		if len(queues) == 0 {
			continue
		}
		if _, err := n.pool.Exec(ctx, "SELECT pg_notify($1, q) FROM unnest($2::text[]) AS q", notifyChannel, queues); err != nil && ctx.Err() == nil {
			n.log.Warn("could not notify other replicas of pushes", "error", err)
		}
	}
}
