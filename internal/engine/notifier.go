package engine

import (
	"context"
	"encoding/binary"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// notifyChannel is the Postgres channel that tells other replicas a queue
// got messages, so their long polls wake too.
const notifyChannel = "lethe_push"

// notifyMinGap spaces cross-replica notifications: NOTIFY serializes
// committing transactions on a global lock, so it stays off the push path
// and is sent at most once per gap, every queue pushed to meanwhile in one
// statement. The first one after a quiet gap goes at once, so at low load a
// remote long poll wakes as soon as a local one.
const notifyMinGap = 5 * time.Millisecond

// notifier wakes long polls: local waiters directly, other replicas through
// LISTEN/NOTIFY sent from a background goroutine. A push wakes one waiter
// per consumer group of the queue, the one waiting longest: only one
// consumer of a group can take a partition's new messages, and waking them
// all made every push cost a pop per idle consumer. A lease released on a
// partition with more work wakes one waiter of its group the same way. A
// woken waiter that finds nothing goes back to waiting, keeping its place
// in line; the others still re-poll every second. A local wake-up names
// the partition that caused it (wakeHint).
type notifier struct {
	pool  *pgxpool.Pool
	log   *slog.Logger
	woken func(queue string) // a test signal

	mu      sync.Mutex
	seq     uint64
	waiters map[string]map[chan wakeHint]waiter
	outbox  map[string]struct{}
	kick    chan struct{}
	// ownPIDs are the backends this replica sent NOTIFYs from.
	ownPIDs map[uint32]struct{}
	// pushMarks count this replica's pushes by partition (hashed: two
	// partitions may share a counter). An ack that releases a lease reads
	// its partition's counter before it looks for more work and again
	// after it commits: a push that landed in between woke a waiter that
	// found the partition still leased, so the ack wakes one itself.
	pushMarks [pushMarkSlots]atomic.Uint64
}

// pushMarkSlots is how many push counters there are (8 KiB).
const pushMarkSlots = 1024

// pushMark answers the push counter of pid.
func (n *notifier) pushMark(pid uuid.UUID) uint64 { return n.pushMarks[markSlot(pid)].Load() }

// markPush counts a push to pid; call it before the push's wake-up.
func (n *notifier) markPush(pid uuid.UUID) { n.pushMarks[markSlot(pid)].Add(1) }

func markSlot(pid uuid.UUID) uint32 { return binary.LittleEndian.Uint32(pid[12:]) % pushMarkSlots }

type waiter struct {
	group string
	since uint64 // order of arrival: the longest waiting is woken first
}

// wakeHint names the partition whose push or released lease woke a long
// poll, so that the woken pop tries it first instead of listing the
// queue's partitions: the listing is a round trip, and at low load most
// of a pop's work. The claim checks everything again, and a pop that gets
// nothing from it lists as before. The zero hint names none (a wake-up
// from another replica's NOTIFY, or from work without one partition).
type wakeHint struct {
	queueID   int64
	pid       uuid.UUID
	partition string
}

func (h wakeHint) named() bool { return h.partition != "" }

func newNotifier(pool *pgxpool.Pool, log *slog.Logger, woken func(queue string)) *notifier {
	return &notifier{
		pool:    pool,
		log:     log,
		woken:   woken,
		waiters: map[string]map[chan wakeHint]waiter{},
		outbox:  map[string]struct{}{},
		ownPIDs: map[uint32]struct{}{},
		kick:    make(chan struct{}, 1),
	}
}

// subscribe returns a channel that receives after a push to any of queues
// picks this waiter of group, with the hint of the wake-up. since is the
// place in line (0: the back) of a waiter coming back after a wake-up that
// found nothing; subscribe answers the place it took.
func (n *notifier) subscribe(group string, since uint64, queues ...string) (<-chan wakeHint, uint64, func()) {
	ch := make(chan wakeHint, 1)
	n.mu.Lock()
	if since == 0 {
		n.seq++
		since = n.seq
	}
	w := waiter{group: group, since: since}
	for _, q := range queues {
		if n.waiters[q] == nil {
			n.waiters[q] = map[chan wakeHint]waiter{}
		}
		n.waiters[q][ch] = w
	}
	n.mu.Unlock()
	return ch, since, func() {
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

// notify wakes local waiters on queue, one per group (of group only, when
// group is not empty), handing them hint, and schedules a NOTIFY for the
// other replicas.
func (n *notifier) notify(queue, group string, hint wakeHint) {
	n.wakeLocal(queue, group, hint)
	n.mu.Lock()
	n.outbox[queue] = struct{}{}
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// wakeLocal wakes the longest-waiting waiter of each group on queue, or of
// group only when it is not empty, handing each hint.
func (n *notifier) wakeLocal(queue, group string, hint wakeHint) {
	defer n.woken(queue)
	n.mu.Lock()
	defer n.mu.Unlock()
	pick := map[string]chan wakeHint{}
	since := map[string]uint64{}
	for ch, w := range n.waiters[queue] {
		if len(ch) > 0 || group != "" && w.group != group {
			continue // already woken, not yet gone (pick another), or not of group
		}
		if cur, ok := since[w.group]; !ok || w.since < cur {
			pick[w.group], since[w.group] = ch, w.since
		}
	}
	for _, ch := range pick {
		select {
		case ch <- hint:
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
		if n.sentByUs(msg.PID) {
			continue // this replica woke its own waiters at commit already
		}
		n.wakeLocal(msg.Payload, "", wakeHint{})
	}
}

// sendLoop runs until ctx ends: it sends the NOTIFYs of this replica's
// pushes and released leases, at most one statement per notifyMinGap.
func (n *notifier) sendLoop(ctx context.Context) {
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.kick:
		}
		if gap := notifyMinGap - time.Since(last); gap > 0 {
			t := time.NewTimer(gap)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		last = time.Now()
		if err := n.send(ctx, n.takeOutbox()); err != nil && ctx.Err() == nil {
			n.log.Warn("could not notify other replicas of pushes", "error", err)
		}
	}
}

func (n *notifier) takeOutbox() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	queues := make([]string, 0, len(n.outbox))
	for q := range n.outbox {
		queues = append(queues, q)
	}
	n.outbox = map[string]struct{}{}
	return queues
}

// send NOTIFYs queues, first noting the sending backend so that the
// listener passes over its own notifications: the local waiters were woken
// at commit, and the echo would wake a second one per group for nothing.
func (n *notifier) send(ctx context.Context, queues []string) error {
	if len(queues) == 0 {
		return nil
	}
	conn, err := n.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	n.mu.Lock()
	if len(n.ownPIDs) >= maxOwnPIDs {
		n.ownPIDs = map[uint32]struct{}{} // bounded; forgetting only lets an echo through
	}
	n.ownPIDs[conn.Conn().PgConn().PID()] = struct{}{}
	n.mu.Unlock()
	_, err = conn.Exec(ctx, "SELECT pg_notify($1, q) FROM unnest($2::text[]) AS q", notifyChannel, queues)
	return err
}

// maxOwnPIDs bounds the backends remembered as this replica's senders (the
// pool's connections, renewed over time).
const maxOwnPIDs = 256

// sentByUs says a notification came from one of this replica's backends.
func (n *notifier) sentByUs(pid uint32) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.ownPIDs[pid]
	return ok
}
