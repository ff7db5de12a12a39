package main

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/lethebench"
	"github.com/lethe-mq/lethe/bench/internal/meter"
)

// drainStats are the pops of a drain.
type drainStats struct {
	Pops      int64         `json:"pops"`
	EmptyPops int64         `json:"empty_pops"` // while messages were still to ack
	Pop       meter.Summary `json:"pop_latency"`
}

// drainBacklog has o.consumers consumers of group o.group pop batches of
// o.popBatch without waiting and ack each batch in one request, as
// lethe's own pop+ack scenario does (bench/internal/lethebench/consume.go),
// until o.n messages are acked.
func drainBacklog(ctx context.Context, o options, led *ledger, progress io.Writer) (phase, drainStats) {
	c := lethebench.NewClient(o.url, o.consumers)
	defer c.Close()
	var pops, empty atomic.Int64
	var popLatency meter.Recorder
	out := meter.Run(ctx, meter.Spec{
		Name: fmt.Sprintf("%s pop+ack", o.system), Unit: "msg", Workers: o.consumers,
		Duration: o.limit, Total: int64(o.n), Out: progress,
	}, func(ctx context.Context, w int) (int, error) {
		began := time.Now()
		raw, err := c.PopRaw(ctx, o.queue, o.group, o.popBatch)
		if err != nil {
			return 0, err
		}
		popLatency.Add(time.Since(began))
		pops.Add(1)
		msgs, err := scanIDs(raw)
		if err != nil {
			return 0, err
		}
		if len(msgs) == 0 {
			empty.Add(1)
			meter.Sleep(ctx, 5*time.Millisecond) // every partition leased or done
			return 0, nil
		}
		if err := c.Ack(ctx, o.group, msgs); err != nil {
			return 0, err
		}
		led.delivered(msgs)
		return len(msgs), nil
	})
	return phaseOf(out), drainStats{Pops: pops.Load(), EmptyPops: empty.Load(), Pop: popLatency.Summary()}
}
