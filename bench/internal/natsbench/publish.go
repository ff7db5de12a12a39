package natsbench

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

// publish: batch 1 is a synchronous Publish (wait for the ack) per message;
// a batch of N is N PublishAsync calls and a wait for their N acks.
func publish(ctx context.Context, env *Env, conns []conn, subject string, payloads [][]byte, size, batch, clients int) {
	seq := make([]int, clients)
	out := meter.Run(ctx, meter.Spec{
		Name: fmt.Sprintf("nats publish b%d c%d %s", batch, clients, payload.Label(size)), Unit: "msg",
		Workers: clients, Warmup: env.Plan.Warmup, Duration: env.Plan.Duration, Latency: true, Out: env.Out,
	}, func(ctx context.Context, w int) (int, error) {
		js := conns[w%len(conns)].js
		k := seq[w]
		seq[w]++
		if batch == 1 {
			if _, err := js.Publish(ctx, subject, payloads[(k*clients+w)%len(payloads)]); err != nil {
				return 0, err
			}
			return 1, nil
		}
		futures := make([]jetstream.PubAckFuture, batch)
		for i := range futures {
			f, err := js.PublishAsync(subject, payloads[(k*batch+i+w*997)%len(payloads)])
			if err != nil {
				return 0, err
			}
			futures[i] = f
		}
		for _, f := range futures {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				return 0, err
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		return batch, nil
	})
	label := "Publish, wait for each ack"
	if batch > 1 {
		label = fmt.Sprintf("PublishAsync windows of %d, wait for all acks", batch)
	}
	ceiling := fmt.Sprintf("ceiling/segment-ingest/%d", size)
	if batch == 1 {
		ceiling = fmt.Sprintf("ceiling/insert/%d", size)
	}
	r := result.Result{
		Key: fmt.Sprintf("nats/push/b%d/%d", batch, size), System: result.NATS, Scenario: "push",
		Label: fmt.Sprintf("%s, %d clients", label, clients), Payload: size, Batch: batch, Clients: clients,
		Partitions: 1, Unit: "msg/s", Ceiling: ceiling,
	}.FromOutcome(out)
	lat := out.Latency
	r.Latency = &lat
	env.Sink.Add(r)
}
