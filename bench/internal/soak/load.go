package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/lethebench"
	"github.com/lethe-mq/lethe/bench/internal/meter"
)

const (
	sendersPerQueue = 16
	popBatch        = 100
	popWait         = 2 * time.Second
)

// queueRun is one queue of the load as it runs.
type queueRun struct {
	QueueLoad
	name   string // in this run
	ledger *ledger
	reqs   atomic.Int64
}

// load drives the producers and consumers and keeps their counts.
type load struct {
	spec    *Spec
	c       *lethebench.Client
	queues  []*queueRun
	groups  []string
	lat     latencies
	pushErr meter.Errors
	popErr  meter.Errors
	ackErr  meter.Errors
}

func newLoad(spec *Spec, c *lethebench.Client) *load {
	l := &load{spec: spec, c: c}
	for g := range spec.Groups {
		l.groups = append(l.groups, fmt.Sprintf("soak-g%d", g+1))
	}
	for _, q := range spec.Queues {
		l.queues = append(l.queues, &queueRun{QueueLoad: q, name: spec.queueName(q), ledger: newLedger(spec.Groups)})
	}
	return l
}

// configure creates the queues with their rules.
func (l *load) configure(ctx context.Context) error {
	for _, q := range l.queues {
		if err := l.c.Configure(ctx, q.name, q.options()); err != nil {
			return fmt.Errorf("soak: configure %s: %w", q.name, err)
		}
	}
	return nil
}

// consume starts every consumer; they stop when ctx ends. The returned
// wait blocks until they have.
func (l *load) consume(ctx context.Context) (wait func()) {
	var wg sync.WaitGroup
	for _, q := range l.queues {
		for g := range l.groups {
			for range l.spec.Consumers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					l.consumer(ctx, q, g)
				}()
			}
		}
	}
	return wg.Wait
}

func (l *load) consumer(ctx context.Context, q *queueRun, g int) {
	group := l.groups[g]
	for ctx.Err() == nil {
		msgs, err := l.c.Pop(ctx, q.name, group, popBatch, popWait)
		now := time.Now()
		if err != nil {
			if ctx.Err() == nil {
				l.popErr.Note(err)
				meter.Sleep(ctx, 100*time.Millisecond)
			}
			continue
		}
		for _, m := range msgs {
			at, seq, ok := stampOf(m.Data)
			if !ok {
				q.ledger.receive(g, -1)
				continue
			}
			q.ledger.receive(g, seq)
			l.lat.e2e(now.Sub(at))
		}
		if len(msgs) > 0 {
			// Acked even after ctx ended: the message was counted as received.
			if err := l.c.Ack(context.WithoutCancel(ctx), group, msgs); err != nil {
				l.ackErr.Note(err)
			}
		}
	}
}

// produce offers every queue's rate for d; it returns when every push has
// finished.
func (l *load) produce(ctx context.Context, d time.Duration) {
	var wg sync.WaitGroup
	for i, q := range l.queues {
		if q.Rate == 0 {
			continue
		}
		n := min(l.spec.Batch, q.Rate)
		wg.Add(1)
		go func() {
			defer wg.Done()
			meter.Paced(ctx, q.Rate/n, sendersPerQueue, d, func(ctx context.Context) {
				l.pushOne(ctx, q, n, uint64(i))
			})
		}()
	}
	wg.Wait()
}

func (l *load) pushOne(ctx context.Context, q *queueRun, n int, stream uint64) {
	k := q.reqs.Add(1)
	first := q.ledger.take(n)
	rng := rand.New(rand.NewPCG(uint64(k), stream))
	at := time.Now()
	body := pushBody(rng, q.name, fmt.Sprintf("p%d", k%int64(q.Partitions)), first, n, l.spec.Size, at)
	if err := l.c.Push(ctx, body); err != nil {
		if ctx.Err() == nil {
			l.pushErr.Note(err)
		}
		return
	}
	l.lat.push(time.Since(at))
	q.ledger.pushedOK(first, n)
}

// drain waits until every group has received everything pushed, or limit
// passes; it reports what is still missing.
func (l *load) drain(ctx context.Context, limit time.Duration) int64 {
	deadline := time.Now().Add(limit)
	for {
		missing := l.missing()
		if missing == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return missing
		}
		meter.Sleep(ctx, 200*time.Millisecond)
	}
}

// missing is the deliveries still owed, summed over queues and groups.
func (l *load) missing() int64 {
	var n int64
	for _, q := range l.queues {
		for g := range l.groups {
			n += max(0, q.ledger.missing(g))
		}
	}
	return n
}

// counts are the totals so far, for progress lines.
func (l *load) counts() (pushed, received int64) {
	for _, q := range l.queues {
		p, r := q.ledger.tally()
		pushed, received = pushed+p, received+r
	}
	return pushed, received
}

// latencies keeps push and end-to-end latency for the current sample
// interval and for the whole soak.
type latencies struct {
	mu                  sync.Mutex
	winPush, winE2E     *meter.Recorder
	totalPush, totalE2E meter.Recorder
	pushCount, e2eCount atomic.Int64
}

func (l *latencies) push(d time.Duration) {
	l.pushCount.Add(1)
	l.totalPush.Add(d)
	l.window(func() { l.winPush.Add(d) })
}

func (l *latencies) e2e(d time.Duration) {
	l.e2eCount.Add(1)
	l.totalE2E.Add(d)
	l.window(func() { l.winE2E.Add(d) })
}

func (l *latencies) window(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.winPush == nil {
		l.winPush, l.winE2E = &meter.Recorder{}, &meter.Recorder{}
	}
	f()
}

// cut ends the current interval and returns its distributions.
func (l *latencies) cut() (push, e2e meter.Summary) {
	l.mu.Lock()
	p, e := l.winPush, l.winE2E
	l.winPush, l.winE2E = &meter.Recorder{}, &meter.Recorder{}
	l.mu.Unlock()
	if p == nil {
		return meter.Summary{}, meter.Summary{}
	}
	return p.Summary(), e.Summary()
}
