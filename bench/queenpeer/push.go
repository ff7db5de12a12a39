package main

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/lethe-mq/lethe/bench/internal/lethebench"
	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
)

// phase is how one half of a run went.
type phase struct {
	Rate       float64 `json:"msg_per_s"`
	Seconds    float64 `json:"seconds"`
	Done       bool    `json:"done"` // every message, before the time limit
	Errors     int64   `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
}

func phaseOf(out meter.Outcome) phase {
	return phase{Rate: out.Rate, Seconds: out.Elapsed.Seconds(), Done: out.Drained, Errors: out.Errors, FirstError: out.FirstError}
}

// pending is a push request not yet accepted.
type pending struct {
	body []byte
	ids  []string
}

// pushBacklog pushes o.n messages in requests of o.pushBatch for one
// partition each, the partitions taken in turn, from o.pushers clients. A
// failed request is sent again (its ids make a repeat a duplicate).
func pushBacklog(ctx context.Context, o options, led *ledger, progress io.Writer) phase {
	c := lethebench.NewClient(o.url, o.pushers)
	defer c.Close()
	src := &batches{o: o, payloads: payload.Pool(1, 1024, o.size), retry: make(chan pending, o.pushers)}
	out := meter.Run(ctx, meter.Spec{
		Name: fmt.Sprintf("%s push", o.system), Unit: "msg", Workers: o.pushers,
		Duration: o.limit, Total: int64(o.n), Out: progress,
	}, func(ctx context.Context, w int) (int, error) {
		p, ok, err := src.take(ctx)
		if !ok || err != nil {
			return 0, err
		}
		if err := c.PushAny2xx(ctx, p.body); err != nil {
			src.retry <- p
			return 0, err
		}
		led.pushed(p.ids)
		return len(p.ids), nil
	})
	return phaseOf(out)
}

// batches hands out the backlog's push requests: first the ones that
// failed, then the next new one, then (all sent) waits for a failure.
type batches struct {
	o        options
	payloads [][]byte
	next     atomic.Int64
	retry    chan pending // capacity: one per client, each holds at most one
}

// take returns the next request, or false once ctx ends.
func (b *batches) take(ctx context.Context) (pending, bool, error) {
	select {
	case p := <-b.retry:
		return p, true, nil
	default:
	}
	k := int(b.next.Add(1) - 1)
	if k*b.o.pushBatch >= b.o.n {
		select {
		case p := <-b.retry:
			return p, true, nil
		case <-ctx.Done():
			return pending{}, false, nil
		}
	}
	n := min(b.o.pushBatch, b.o.n-k*b.o.pushBatch)
	body, ids, err := batchBody(b.o.queue, partitionName(k%b.o.partitions), n, b.payloads, k*b.o.pushBatch)
	if err != nil {
		return pending{}, false, err
	}
	return pending{body: body, ids: ids}, true, nil
}
