package natsbench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

// consume drains the stream with groups durable pull consumers, each read
// by one goroutine that acks the last message of every batch (AckAll) and
// waits for the server to confirm it.
func consume(ctx context.Context, env *Env, stream jetstream.Stream, size, groups int, total int64) error {
	consumers := make([]jetstream.Consumer, groups)
	for g := range consumers {
		c, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
			Durable: fmt.Sprintf("g%d-%d", groups, g), AckPolicy: jetstream.AckAllPolicy,
			DeliverPolicy: jetstream.DeliverAllPolicy, MaxAckPending: 10 * fetchBatch,
		})
		if err != nil {
			return fmt.Errorf("nats: create consumer: %w", err)
		}
		consumers[g] = c
	}
	name := "nats pull+ack " + payload.Label(size)
	if groups > 1 {
		name = fmt.Sprintf("nats fan-out %d consumers %s", groups, payload.Label(size))
	}
	out := meter.Run(ctx, meter.Spec{
		Name: name, Unit: "msg", Workers: groups, Duration: env.Plan.DrainLimit, Total: int64(groups) * total, Out: env.Out,
	}, func(ctx context.Context, w int) (int, error) {
		batch, err := consumers[w].Fetch(fetchBatch, jetstream.FetchMaxWait(500*time.Millisecond))
		if err != nil {
			return 0, err
		}
		var last jetstream.Msg
		n := 0
		for m := range batch.Messages() {
			last = m
			n++
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
			return 0, err
		}
		if last != nil {
			if err := last.DoubleAck(ctx); err != nil {
				return 0, err
			}
		}
		return n, nil
	})
	r := result.Result{
		Key: fmt.Sprintf("nats/pop-ack/%d", size), System: result.NATS, Scenario: "pop-ack",
		Label:   "durable pull consumer, fetch 100, AckAll on the last (confirmed)",
		Payload: size, Batch: fetchBatch, Clients: 1, Partitions: 1, Groups: 1, Unit: "msg/s",
		Ceiling: fmt.Sprintf("ceiling/segment-read/%d", size),
	}
	if groups > 1 {
		r.Key, r.Scenario, r.Unit = fmt.Sprintf("nats/fanout/g%d/%d", groups, size), "fanout", "deliveries/s"
		r.Label = fmt.Sprintf("fan-out to %d durable pull consumers", groups)
		r.Clients, r.Groups = groups, groups
	}
	r = r.FromOutcome(out)
	if out.Drained {
		r.Notes = fmt.Sprintf("drained %s in %.1f s", meter.Group(out.Items), out.Elapsed.Seconds())
	} else {
		r.Notes = fmt.Sprintf("time limit: %s of %s", meter.Group(out.Items), meter.Group(int64(groups)*total))
	}
	env.Sink.Add(r)
	return nil
}
