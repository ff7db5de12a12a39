package lethebench

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

// PushLatency offers the end-to-end run's push load with nobody consuming:
// the push request's latency against the same ceiling (INSERT + commit at
// the same rate, which has no readers either). The end-to-end run then
// measures it again beside eight long-polling consumers, on the same two
// cores.
func PushLatency(ctx context.Context, env *Env, size int) error {
	queue := env.name("push-latency-%d", size)
	c := newClient(env.URL, latencySenders)
	defer c.close()
	b, err := latencyQueue(ctx, env, c, queue, size)
	if err != nil {
		return err
	}
	var (
		rtt         meter.Recorder
		errs        meter.Errors
		measured    atomic.Int64
		measureFrom = time.Now().Add(env.Plan.Warmup)
		key         = fmt.Sprintf("lethe/push-alone-latency/%d", size)
	)
	endWindow := env.Profile.WindowFrom(ctx, key, measureFrom, env.Plan.LatencyDuration)
	name := fmt.Sprintf("lethe push latency alone %d msg/s %s", env.Plan.LatencyRate, payload.Label(size))
	prog := meter.StartProgress(env.Out, name, func() string {
		s := rtt.Summary()
		return fmt.Sprintf("measured %s, p50 %.1f ms, p99 %.1f ms", meter.Group(measured.Load()), s.P50, s.P99)
	})
	cores := env.coresFrom(measureFrom)
	started, missed := pacedPushes(ctx, env, c, b, size, measureFrom, &rtt, &measured, &errs)
	busy := cores().String(runtime.NumCPU())
	prog.Stop()
	endWindow()

	s := rtt.Summary()
	env.Sink.Add(result.Result{
		Key: key, System: result.Lethe, Scenario: "push-alone-latency",
		Label:   fmt.Sprintf("push request latency at %d msg/s, nobody consuming", env.Plan.LatencyRate),
		Payload: size, Batch: 1, Clients: latencySenders, Partitions: latencyPartitions,
		Unit: "ms", Value: s.P50, Latency: &s, Count: int64(s.Count), Seconds: env.Plan.LatencyDuration.Seconds(),
		Errors: errs.Count(), FirstError: errs.First(), Ceiling: fmt.Sprintf("ceiling/insert-latency/%d", size),
		PeakRSSMiB: env.peakMiB(),
		Notes: fmt.Sprintf("offered %d msg/s (batch 1, %d partitions); %d requests started, %d sends skipped (all %d senders busy); %s",
			env.Plan.LatencyRate, latencyPartitions, started, missed, latencySenders, busy),
	})
	return nil
}
