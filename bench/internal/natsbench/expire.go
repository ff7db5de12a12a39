package natsbench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

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
