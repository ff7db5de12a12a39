package engine

import (
	"sync"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// effects are what committed work tells the rest of the replica: metric
// counters, long-poll wake-ups, and the logs of partitions that could not be
// served. Code that changes state collects them while its transaction runs
// and calls Engine.fire once that transaction has committed; effects of a
// transaction that rolled back are dropped, so nothing is counted or woken
// for work that did not happen. fire is the one place hooks and wake-ups
// happen.
type effects struct {
	counts []effectCount
	faults []effectFault
}

type countKind uint8

const (
	countPushed countKind = iota
	countDelivered
	countAcked
	countUnreadable
	countExpired
	countWake     // a wake-up without a count (a seek made messages available)
	countReleased // a lease ended on a partition that may have more work for the group
	countGap      // a pop reported messages the group lost unread
)

type effectCount struct {
	kind          countKind
	queue, group  string
	status        string
	n             int
	partition     string // countUnreadable: for the log
	unreadableErr error
	gap           *api.Gap // countGap: for the log
	hint          wakeHint // countPushed, countReleased: the partition
	// countReleased: more says messages follow the group's position; else
	// the partition's push mark (notifier.pushMarks) before the ack looked.
	more bool
	mark uint64
}

type effectFault struct {
	queue, partition, op string
	err                  error
}

// pushed counts n messages appended to queue, to the partition hint names
// when it names one; consumers of queue wake.
func (fx *effects) pushed(queue string, n int, hint wakeHint) {
	fx.counts = append(fx.counts, effectCount{kind: countPushed, queue: queue, n: n, hint: hint})
}

// wake wakes consumers of queue without counting anything.
func (fx *effects) wake(queue string) {
	fx.counts = append(fx.counts, effectCount{kind: countWake, queue: queue})
}

// released records a lease of group ended on the partition of queue hint
// names. One of the group's long polls wakes to take what follows when
// more says messages follow, or when a push to the partition counted
// after mark (notifier.pushMark): that push's own wake-up came while the
// partition was still leased, and the ack, which looked for messages
// before it committed, saw none.
func (fx *effects) released(queue, group string, hint wakeHint, more bool, mark uint64) {
	fx.counts = append(fx.counts, effectCount{kind: countReleased, queue: queue, group: group, hint: hint, more: more, mark: mark})
}

func (fx *effects) delivered(queue, group string, n int) {
	fx.counts = append(fx.counts, effectCount{kind: countDelivered, queue: queue, group: group, n: n})
}

func (fx *effects) acked(queue, group, status string, n int) {
	fx.counts = append(fx.counts, effectCount{kind: countAcked, queue: queue, group: group, status: status, n: n})
}

// unreadable counts n stored messages of a partition that could not be
// served, err being the first one's reason.
func (fx *effects) unreadable(queue, partition string, n int, err error) {
	fx.counts = append(fx.counts, effectCount{kind: countUnreadable, queue: queue, partition: partition, n: n, unreadableErr: err})
}

// expired counts n messages group passed undelivered: they outlived the
// queue's ttl.
func (fx *effects) expired(queue, group string, n int) {
	fx.counts = append(fx.counts, effectCount{kind: countExpired, queue: queue, group: group, n: n})
}

// gap records a gap a pop reported to group.
func (fx *effects) gap(g api.Gap, group string) {
	fx.counts = append(fx.counts, effectCount{kind: countGap, queue: g.Queue, group: group, n: int(g.Messages), gap: &g})
}

// partitionFailed records a partition skipped by op because its stored
// state could not be served.
func (fx *effects) partitionFailed(queue, partition, op string, err error) {
	fx.faults = append(fx.faults, effectFault{queue: queue, partition: partition, op: op, err: err})
}

// fire applies fx. Call it only after the transaction that collected fx
// committed (or for work that needed none).
func (e *Engine) fire(fx *effects) {
	h := e.cfg.Hooks
	for _, c := range fx.counts {
		switch c.kind {
		case countPushed:
			if h.Pushed != nil {
				h.Pushed(c.queue, c.n)
			}
			if c.hint.named() {
				e.notifier.markPush(c.hint.pid)
			}
			e.notifier.notify(c.queue, "", c.hint)
		case countWake:
			e.notifier.notify(c.queue, "", wakeHint{})
		case countReleased:
			if c.more || e.notifier.pushMark(c.hint.pid) != c.mark {
				e.notifier.notify(c.queue, c.group, c.hint)
			}
		case countDelivered:
			if h.Delivered != nil {
				h.Delivered(c.queue, c.group, c.n)
			}
		case countAcked:
			if h.Acked != nil {
				h.Acked(c.queue, c.group, c.status, c.n)
			}
		case countUnreadable:
			e.log.Warn("stored messages are unreadable; a pop dead-letters them, a browse skips them",
				"queue", c.queue, "partition", c.partition, "messages", c.n, "error", c.unreadableErr)
			if h.Unreadable != nil {
				h.Unreadable(c.queue, c.n)
			}
		case countExpired:
			if e.faultLog.due("expired\x00"+c.queue+"\x00"+c.group, e.clock.Now()) {
				e.log.Info("messages expired (older than the queue's ttl) and were passed without delivery (logged once a minute per group; lethe_messages_expired_total counts each)",
					"queue", c.queue, "group", groupLabelOrQueue(c.group), "messages", c.n)
			}
			if h.Expired != nil {
				h.Expired(c.queue, c.group, c.n)
			}
		case countGap:
			// Once per gap: the pop that reports it moves the group past it.
			e.log.Warn("a consumer group was told it lost messages unread", "queue", c.queue,
				"group", groupLabelOrQueue(c.group), "partition", c.gap.Partition, "from_offset", c.gap.FromOffset,
				"to_offset", c.gap.ToOffset, "messages", c.n, "rules", c.gap.Rules)
			if h.Gap != nil {
				h.Gap(c.queue, c.group, c.n)
			}
		}
	}
	for _, f := range fx.faults {
		if e.faultLog.due(f.queue+"\x00"+f.partition+"\x00"+f.op, e.clock.Now()) {
			e.log.Error("partition skipped: its stored state could not be served (logged once a minute per partition)",
				"queue", f.queue, "partition", f.partition, "op", f.op, "error", f.err)
		}
		if h.PartitionFailed != nil {
			h.PartitionFailed(f.queue, f.op)
		}
	}
}

// logThrottle lets a repeated log line through once per interval per key:
// a partition that cannot be served fails every pop of it, and the log
// would otherwise repeat at the pop rate (the counter still counts each).
type logThrottle struct {
	mu   sync.Mutex
	last map[string]time.Time
}

const faultLogInterval = time.Minute

func (t *logThrottle) due(key string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if at, ok := t.last[key]; ok && now.Sub(at) < faultLogInterval && !now.Before(at) {
		return false
	}
	if t.last == nil || len(t.last) > 10_000 {
		t.last = map[string]time.Time{} // bounded; forgetting only logs again
	}
	t.last[key] = now
	return true
}
