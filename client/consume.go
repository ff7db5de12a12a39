package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// Consume defaults.
const (
	PollTimeoutDefault = 10 * time.Second
	// ackTimeout bounds the acks sent after the consume context ended, so
	// work already done is not redelivered.
	ackTimeout = 10 * time.Second
	// popBackoffMax caps the wait after a failed pop.
	popBackoffMax = 5 * time.Second
)

// ConsumeOptions shape a Consume loop. Zero values take the defaults.
type ConsumeOptions struct {
	Partition string // one partition; empty: any with work
	Group     string // consumer group; empty: queue mode
	Batch     int    // messages per pop (1)
	// Concurrency is how many workers pop and handle at once (1). A
	// partition is leased to one worker at a time, so more workers than
	// partitions with work do not add throughput.
	Concurrency int
	// PollTimeout is how long one long poll waits for messages (10s).
	PollTimeout time.Duration
	// LeaseRenewInterval, when set, extends the leases of a batch this
	// often while its handler runs, so slow handlers keep their messages.
	// Set it well under the queue's leaseTime.
	LeaseRenewInterval time.Duration
	// LeaseRenewSeconds is how long each renewal extends a lease from now;
	// 0 uses the queue's leaseTime.
	LeaseRenewSeconds int
	// Limit stops the loop after this many handler calls; 0: no limit.
	Limit int
	// IdleTimeout stops the loop when no message came for this long;
	// 0: never.
	IdleTimeout      time.Duration
	SubscriptionMode string
	SubscriptionFrom string
	// OnError hears about errors the loop rides out: failed pops it will
	// retry, rejected acks, failed lease renewals. Handler errors are not
	// reported here; they fail the message.
	OnError func(error)
}

// Handler processes one message. A nil return acks it completed; an error
// acks it failed with the error's text, so it is redelivered until the
// queue's retryLimit, then dead-lettered. ctx ends when Consume's does.
type Handler func(ctx context.Context, msg api.Message) error

// Consume pops messages of queue and hands each to handler, on
// opts.Concurrency workers, until ctx ends (it then returns nil) or Limit or
// IdleTimeout stops it. Messages of one batch are handled in order and
// acked together when the batch is done; after a failure the rest of the
// batch is not handled but released for redelivery, as the server would
// redeliver it anyway. It returns an error only when the server refuses the
// pop itself (a 4xx, such as a bad queue name).
func (c *Client) Consume(ctx context.Context, queue string, opts ConsumeOptions, handler Handler) error {
	if err := opts.validate(queue, handler); err != nil {
		return err
	}
	popCtx, stop := context.WithCancel(ctx)
	defer stop()
	cons := &consumer{c: c, queue: queue, opts: opts, handler: handler, popCtx: popCtx, stop: stop}
	cons.lastMessage.Store(time.Now().UnixNano())
	var wg sync.WaitGroup
	for range opts.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cons.work(ctx)
		}()
	}
	wg.Wait()
	if cons.fatal != nil {
		return fmt.Errorf("consume %s: %w", queue, cons.fatal)
	}
	return nil
}

func (o *ConsumeOptions) validate(queue string, handler Handler) error {
	switch {
	case queue == "":
		return errors.New("consume: queue is required")
	case handler == nil:
		return errors.New("consume: handler is required")
	case o.Batch < 0, o.Concurrency < 0, o.Limit < 0, o.LeaseRenewSeconds < 0,
		o.PollTimeout < 0, o.LeaseRenewInterval < 0, o.IdleTimeout < 0:
		return errors.New("consume: options must not be negative")
	}
	o.Batch = cmp.Or(o.Batch, 1)
	o.Concurrency = cmp.Or(o.Concurrency, 1)
	o.PollTimeout = cmp.Or(o.PollTimeout, PollTimeoutDefault)
	return nil
}

// consumer is the state the workers of one Consume share.
type consumer struct {
	c       *Client
	queue   string
	opts    ConsumeOptions
	handler Handler
	popCtx  context.Context // ends on ctx, Limit, IdleTimeout or a fatal error
	stop    context.CancelFunc

	mu       sync.Mutex
	reserved int // messages popped or being popped, counted against Limit

	lastMessage atomic.Int64 // unix nanos of the last message popped
	fatalOnce   sync.Once
	fatal       error
}

func (cs *consumer) work(ctx context.Context) {
	failures := 0
	for cs.popCtx.Err() == nil {
		n := cs.reserve()
		if n == 0 {
			return
		}
		wait, ok := cs.pollTimeout()
		if !ok {
			cs.unreserve(n)
			cs.stop()
			return
		}
		msgs, err := cs.c.Pop(cs.popCtx, cs.queue, PopOptions{
			Partition: cs.opts.Partition, Group: cs.opts.Group, Batch: n, Wait: true, Timeout: wait,
			SubscriptionMode: cs.opts.SubscriptionMode, SubscriptionFrom: cs.opts.SubscriptionFrom,
		})
		cs.unreserve(n - len(msgs))
		if err != nil {
			if cs.popCtx.Err() != nil {
				return
			}
			var apiErr *APIError
			if errors.As(err, &apiErr) && !apiErr.Temporary() {
				cs.fatalOnce.Do(func() { cs.fatal = err })
				cs.stop()
				return
			}
			cs.report(err)
			failures++
			if !sleep(cs.popCtx, cs.c.backoff(failures-1, popBackoffMax)) {
				return
			}
			continue
		}
		failures = 0
		if len(msgs) == 0 {
			continue // pollTimeout decides at the top whether idle time is up
		}
		cs.lastMessage.Store(time.Now().UnixNano())
		cs.handleBatch(ctx, msgs)
		// Handling counts as activity: a slow handler does not use up the
		// idle time.
		cs.lastMessage.Store(time.Now().UnixNano())
	}
}

// reserve claims up to Batch messages of the Limit; 0 means the limit is
// reached.
func (cs *consumer) reserve() int {
	if cs.opts.Limit == 0 {
		return cs.opts.Batch
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	n := min(cs.opts.Batch, cs.opts.Limit-cs.reserved)
	cs.reserved += n
	return n
}

func (cs *consumer) unreserve(n int) {
	if cs.opts.Limit == 0 || n == 0 {
		return
	}
	cs.mu.Lock()
	cs.reserved -= n
	cs.mu.Unlock()
}

// pollTimeout is how long the next pop may wait, never past IdleTimeout;
// false means the loop has been idle long enough.
func (cs *consumer) pollTimeout() (time.Duration, bool) {
	if cs.opts.IdleTimeout == 0 {
		return cs.opts.PollTimeout, true
	}
	left := cs.opts.IdleTimeout - time.Since(time.Unix(0, cs.lastMessage.Load()))
	if left <= 0 {
		return 0, false
	}
	return min(cs.opts.PollTimeout, max(left, time.Millisecond)), true
}

// handleBatch runs the handler over msgs in order while their leases are
// renewed, then acks them all in one request.
func (cs *consumer) handleBatch(ctx context.Context, msgs []api.Message) {
	stopRenew := cs.renewLeases(ctx, msgs)
	acks := make([]api.AckRequest, 0, len(msgs))
	skipped := 0
	failed := false
	for _, m := range msgs {
		if failed || ctx.Err() != nil {
			// Released unhandled: no error text, so the failed message's
			// reason is the one the server keeps.
			acks = append(acks, AckRequestFor(m, api.AckFailed, ""))
			skipped++
			continue
		}
		if err := cs.call(ctx, m); err != nil {
			acks = append(acks, AckRequestFor(m, api.AckFailed, err.Error()))
			failed = true
		} else {
			acks = append(acks, AckRequestFor(m, api.AckCompleted, ""))
		}
	}
	stopRenew()
	cs.unreserve(skipped)
	ackCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	results, err := cs.c.AckBatch(ackCtx, cs.opts.Group, acks)
	if err != nil {
		cs.report(fmt.Errorf("ack %d messages of %s: %w", len(acks), cs.queue, err))
		return
	}
	for _, r := range results {
		if !r.Success {
			cs.report(fmt.Errorf("%w: transaction %s: %s", ErrAckRejected, r.TransactionID, r.Error))
		}
	}
}

// call runs the handler, turning a panic into an error so one bad message
// cannot take the process down.
func (cs *consumer) call(ctx context.Context, m api.Message) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("handler panicked: %v", v)
		}
	}()
	return cs.handler(ctx, m)
}

// renewLeases extends every lease of msgs each LeaseRenewInterval until the
// returned stop is called.
func (cs *consumer) renewLeases(ctx context.Context, msgs []api.Message) (stop func()) {
	if cs.opts.LeaseRenewInterval == 0 {
		return func() {}
	}
	var leases []string
	seen := map[string]bool{}
	for _, m := range msgs {
		if m.LeaseID != "" && !seen[m.LeaseID] {
			seen[m.LeaseID] = true
			leases = append(leases, m.LeaseID)
		}
	}
	if len(leases) == 0 {
		return func() {}
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(cs.opts.LeaseRenewInterval)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
			}
			for _, id := range leases {
				if _, err := cs.c.ExtendLease(rctx, id, cs.opts.LeaseRenewSeconds); err != nil && rctx.Err() == nil {
					cs.report(fmt.Errorf("renew lease %s: %w", id, err))
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (cs *consumer) report(err error) {
	if cs.opts.OnError != nil {
		cs.opts.OnError(err)
	}
}

// sleep waits d or until ctx ends; false means ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
