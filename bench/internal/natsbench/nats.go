// Package natsbench measures NATS JetStream on loopback with file storage
// and its default sync policy: publishes acknowledged by the server one at
// a time from 64 clients and asynchronously in windows of 10 and 100 from
// 8, a durable pull consumer acking the last message of every fetched
// batch (AckAll), 5 and 10 such consumers reading the same stream, and
// MaxAge retention expiring the stream.
package natsbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lethe/bench/internal/meter"
	"lethe/bench/internal/payload"
	"lethe/bench/internal/plan"
	"lethe/bench/internal/result"
)

// Env is what the NATS scenarios run against.
type Env struct {
	URL  string
	Out  io.Writer
	Plan plan.Plan
	Sink result.Sink
}

const fetchBatch = 100

// ClientVersion is the nats.go module version of this binary.
func ClientVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/nats-io/nats.go" {
				return d.Version
			}
		}
	}
	return "unknown"
}

type conn struct {
	nc *nats.Conn
	js jetstream.JetStream
}

func dial(url string, n int) ([]conn, error) {
	out := make([]conn, n)
	for i := range out {
		nc, err := nats.Connect(url)
		if err != nil {
			closeAll(out)
			return nil, fmt.Errorf("nats: connect: %w", err)
		}
		js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
		if err != nil {
			nc.Close()
			closeAll(out)
			return nil, err
		}
		out[i] = conn{nc, js}
	}
	return out, nil
}

func closeAll(cs []conn) {
	for _, c := range cs {
		if c.nc != nil {
			c.nc.Close()
		}
	}
}

// Run measures NATS with one payload size.
func Run(ctx context.Context, env *Env, size int) error {
	conns, err := dial(env.URL, 8)
	if err != nil {
		return err
	}
	defer closeAll(conns)
	name := fmt.Sprintf("BENCH_%d", size)
	subject := fmt.Sprintf("bench.%d", size)
	cfg := jetstream.StreamConfig{Name: name, Subjects: []string{subject}, Storage: jetstream.FileStorage,
		Retention: jetstream.LimitsPolicy, Replicas: 1}
	js := conns[0].js
	_ = js.DeleteStream(ctx, name) // left over from an interrupted run
	stream, err := js.CreateOrUpdateStream(ctx, cfg)
	if err != nil {
		return fmt.Errorf("nats: create stream: %w", err)
	}
	defer js.DeleteStream(context.Background(), name)

	payloads := payload.Pool(uint64(size)+23, 1024, size)
	for _, s := range []struct{ batch, clients int }{{1, 64}, {10, 8}, {100, 8}} {
		publish(ctx, env, conns, subject, payloads, size, s.batch, s.clients)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("nats: stream info: %w", err)
	}
	total := int64(info.State.Msgs)
	for _, groups := range []int{1, 5, 10} {
		if err := consume(ctx, env, stream, size, groups, total); err != nil {
			return err
		}
	}
	return expire(ctx, env, js, stream, cfg, size, total)
}

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

// expire sets MaxAge to one second on the full stream and measures how
// fast the server removes the expired messages.
func expire(ctx context.Context, env *Env, js jetstream.JetStream, stream jetstream.Stream, cfg jetstream.StreamConfig, size int, total int64) error {
	cfg.MaxAge = time.Second
	began := time.Now()
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("nats: set MaxAge: %w", err)
	}
	var left atomic.Int64
	left.Store(total)
	prog := meter.StartProgress(env.Out, "nats MaxAge expiry "+payload.Label(size), func() string {
		return fmt.Sprintf("%s of %s messages left", meter.Group(left.Load()), meter.Group(total))
	})
	var finished time.Time
	for time.Since(began) < env.Plan.PeerRetentionLimit && ctx.Err() == nil {
		info, err := stream.Info(ctx)
		if err != nil {
			prog.Stop()
			return fmt.Errorf("nats: stream info: %w", err)
		}
		left.Store(int64(info.State.Msgs))
		if info.State.Msgs == 0 {
			finished = time.Now()
			break
		}
		meter.Sleep(ctx, 100*time.Millisecond)
	}
	prog.Stop()
	end := finished
	if end.IsZero() {
		end = time.Now()
	}
	deleted := total - left.Load()
	r := result.Result{
		Key: fmt.Sprintf("nats/retention/%d", size), System: result.NATS, Scenario: "retention",
		Label:   "MaxAge expiry of the whole stream (MaxAge set to 1 s)",
		Payload: size, Unit: "msg/s", Count: deleted, Seconds: end.Sub(began).Seconds(),
		Ceiling: fmt.Sprintf("ceiling/segment-delete/%d", size),
	}
	if r.Seconds > 0 {
		r.Value = float64(deleted) / r.Seconds
	}
	r.Notes = fmt.Sprintf("%s messages in %.1f s, including up to 1 s of MaxAge itself", meter.Group(deleted), r.Seconds)
	if finished.IsZero() {
		r.Notes = fmt.Sprintf("time limit: %s of %s expired", meter.Group(deleted), meter.Group(total))
	}
	env.Sink.Add(r)
	return nil
}
