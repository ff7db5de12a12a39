package lethebench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

// latencyPartitions and latencyConsumers shape the end-to-end run: one
// long-polling consumer per partition.
const (
	latencyPartitions = 8
	latencyConsumers  = 8
	latencySenders    = 32
)

// Latency offers a fixed load of single-message pushes, each carrying its
// send time, to consumers that long-poll; the figure is the time from the
// push being sent to the consumer holding the message.
func Latency(ctx context.Context, env *Env, size int) error {
	queue := env.name("latency-%d", size)
	c := newClient(env.URL, latencySenders+latencyConsumers)
	defer c.close()
	b, err := latencyQueue(ctx, env, c, queue, size)
	if err != nil {
		return err
	}
	var (
		e2e, pushRTT        meter.Recorder
		sentMeasured, recvd atomic.Int64
		errs                meter.Errors
	)
	measureFrom := time.Now().Add(env.Plan.Warmup)

	consumeCtx, stopConsumers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range latencyConsumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for consumeCtx.Err() == nil {
				msgs, err := c.pop(consumeCtx, queue, "lat", consumeBatch, 500*time.Millisecond, true)
				now := time.Now()
				if err != nil {
					if consumeCtx.Err() == nil {
						errs.Note(err)
						meter.Sleep(consumeCtx, 20*time.Millisecond)
					}
					continue
				}
				for _, m := range msgs {
					if at, ok := payload.StampOf(m.Data); ok && !at.Before(measureFrom) {
						e2e.Add(now.Sub(at))
						recvd.Add(1)
					}
				}
				if len(msgs) > 0 {
					if err := c.ack(ctx, "lat", msgs); err != nil {
						errs.Note(err)
					}
				}
			}
		}()
	}

	endWindow := env.Profile.WindowFrom(ctx, fmt.Sprintf("lethe/e2e/%d", size), measureFrom, env.Plan.LatencyDuration)
	name := fmt.Sprintf("lethe e2e latency %d msg/s %s", env.Plan.LatencyRate, payload.Label(size))
	prog := meter.StartProgress(env.Out, name, func() string {
		s := e2e.Summary()
		return fmt.Sprintf("measured sent %s, delivered %s, p50 %.1f ms, p99 %.1f ms",
			meter.Group(sentMeasured.Load()), meter.Group(recvd.Load()), s.P50, s.P99)
	})
	cores := env.coresFrom(measureFrom)
	started, missed := pacedPushes(ctx, env, c, b, size, measureFrom, &pushRTT, &sentMeasured, &errs)
	busy := cores().String(runtime.NumCPU())
	meter.AwaitDelivered(&recvd, &sentMeasured, 3*time.Second)
	stopConsumers()
	wg.Wait()
	prog.Stop()
	endWindow()

	s, p := e2e.Summary(), pushRTT.Summary()
	peak := env.peakMiB()
	note := fmt.Sprintf("offered %d msg/s (batch 1, %d partitions, %d long-polling consumers); delivered %s of %s sent in the window; %d sends skipped (all %d senders busy); %s",
		env.Plan.LatencyRate, latencyPartitions, latencyConsumers, meter.Group(recvd.Load()), meter.Group(sentMeasured.Load()), missed, latencySenders, busy)
	env.Sink.Add(result.Result{
		Key: fmt.Sprintf("lethe/e2e/%d", size), System: result.Lethe, Scenario: "e2e-latency",
		Label:   fmt.Sprintf("end-to-end latency, push → delivered, at %d msg/s", env.Plan.LatencyRate),
		Payload: size, Batch: 1, Clients: latencySenders, Partitions: latencyPartitions, Groups: 1,
		Unit: "ms", Value: s.P50, Latency: &s, Count: recvd.Load(), Seconds: env.Plan.LatencyDuration.Seconds(),
		Errors: errs.Count(), FirstError: errs.First(), Ceiling: fmt.Sprintf("ceiling/insert-latency/%d", size),
		PeakRSSMiB: peak, Notes: note,
	})
	env.Sink.Add(result.Result{
		Key: fmt.Sprintf("lethe/push-latency/%d", size), System: result.Lethe, Scenario: "push-latency",
		Label:   fmt.Sprintf("push request latency at %d msg/s, beside %d consumers", env.Plan.LatencyRate, latencyConsumers),
		Payload: size, Batch: 1, Clients: latencySenders, Partitions: latencyPartitions,
		Unit: "ms", Value: p.P50, Latency: &p, Count: int64(p.Count), Seconds: env.Plan.LatencyDuration.Seconds(),
		Ceiling: fmt.Sprintf("ceiling/insert-latency/%d", size), PeakRSSMiB: peak,
		Notes: fmt.Sprintf("%d requests started; %s", started, busy),
	})
	return nil
}

// stampBody is a one-item push body with a payload made at send time.
func stampBody(b *bodies, part int, p []byte) []byte {
	buf := make([]byte, 0, len(p)+len(b.head)+64)
	buf = append(buf, `{"items":[`...)
	buf = append(buf, b.head...)
	buf = append(buf, b.names[part]...)
	buf = append(buf, `","payload":`...)
	buf = append(buf, p...)
	return append(buf, "}]}"...)
}

// pacedPushes offers the latency runs' load: single-message pushes at the
// plan's rate over the warmup and the window, each payload stamped with its
// send time; a push sent from measureFrom on adds its round trip to rtt and
// counts in measured.
func pacedPushes(ctx context.Context, env *Env, c *client, b *bodies, size int, measureFrom time.Time,
	rtt *meter.Recorder, measured *atomic.Int64, errs *meter.Errors) (started, missed int64) {
	pad := payload.Padding(5, size)
	var seq atomic.Int64
	return meter.Paced(ctx, env.Plan.LatencyRate, latencySenders, env.Plan.Warmup+env.Plan.LatencyDuration,
		func(ctx context.Context) {
			at := time.Now()
			body := stampBody(b, int(seq.Add(1))%latencyPartitions, payload.Stamped(at, size, pad))
			if err := c.push(ctx, body); err != nil {
				errs.Note(err)
				return
			}
			if !at.Before(measureFrom) {
				rtt.Add(time.Since(at))
				measured.Add(1)
			}
		})
}

// latencyQueue primes a queue of the latency runs' shape (its partitions
// created, the server settled) and answers the bodies that push to it.
func latencyQueue(ctx context.Context, env *Env, c *client, queue string, size int) (*bodies, error) {
	b := newBodies(queue, latencyPartitions, payload.Pool(3, 64, size))
	for _, body := range b.prime() {
		if err := c.push(ctx, body); err != nil {
			return nil, fmt.Errorf("%s: create partitions: %w", queue, err)
		}
	}
	env.settle(ctx)
	return b, nil
}
