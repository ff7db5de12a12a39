// Package natsbench measures NATS JetStream on loopback with file storage
// and its default sync policy: publishes acknowledged by the server one at
// a time from 64 clients and asynchronously in windows of 10 and 100 from
// 8, a durable pull consumer acking the last message of every fetched
// batch (AckAll), 5 and 10 such consumers reading the same stream, and
// MaxAge retention expiring the stream.
package natsbench

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/plan"
	"github.com/lethe-mq/lethe/bench/internal/result"
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
	defer func() { _ = js.DeleteStream(context.Background(), name) }() // the server goes away with the run

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
