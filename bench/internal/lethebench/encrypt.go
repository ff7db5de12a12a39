package lethebench

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

// Shape of the encryption scenario: batches of 100 from 8 clients over
// 100 partitions, drained by 8 consumers popping 100 at a time.
const (
	encBatch, encClients, encPartitions = 100, 8, 100
)

// Encryption measures what encryptionEnabled costs: the same pushes, then
// the same pop+ack drain of what they wrote, on a plain queue and on an
// encrypted one (AES-256-GCM per payload on push, and on pop). Pushes go
// through HTTP (a backlog written straight into the tables would not be
// sealed). The encrypted results' notes give their ratio to the plain ones.
func Encryption(ctx context.Context, env *Env, size int) error {
	var plain [2]result.Result
	for _, on := range []bool{false, true} {
		mode := map[bool]string{false: "off", true: "on"}[on]
		queue := env.name("encrypt-%s-%d", mode, size)
		c := newClient(env.URL, encClients)
		err := c.configure(ctx, queue, map[string]any{"encryptionEnabled": on})
		if err != nil {
			c.close()
			return fmt.Errorf("configure %s (is QUEEN_ENCRYPTION_KEY set on the server?): %w", queue, err)
		}
		push := encryptedPush(ctx, env, c, queue, mode, size)
		var info struct{ Messages int64 }
		if _, err := c.do(ctx, http.MethodGet, "/api/v1/resources/queues/"+url.PathEscape(queue), nil, &info); err != nil {
			c.close()
			return err
		}
		drain := encryptedDrain(ctx, env, c, queue, mode, size, info.Messages)
		c.close()
		for i, r := range []result.Result{push, drain} {
			if on && plain[i].Value > 0 {
				r.Notes += fmt.Sprintf("; %.2f× the plain queue's rate", r.Value/plain[i].Value)
			}
			if !on {
				plain[i] = r
			}
			env.Sink.Add(r)
		}
	}
	return nil
}

// encryptedPush pushes to queue for the plan's window.
func encryptedPush(ctx context.Context, env *Env, c *client, queue, mode string, size int) result.Result {
	b := newBodies(queue, encPartitions, payload.Pool(uint64(size), 1024, size))
	for _, body := range b.prime() {
		_ = c.push(ctx, body)
	}
	env.settle(ctx)
	seq := make([]int, encClients)
	key := fmt.Sprintf("lethe/encrypt-push/%s/%d", mode, size)
	out := meter.Run(ctx, meter.Spec{
		Name: fmt.Sprintf("lethe push encryption %s %s", mode, payload.Label(size)),
		Unit: "msg", Workers: encClients, Warmup: env.Plan.Warmup, Duration: env.Plan.Duration, Out: env.Out,
		Window: env.window(ctx, key),
	}, func(ctx context.Context, w int) (int, error) {
		k := seq[w]
		seq[w]++
		if err := c.push(ctx, b.make((w+k*encClients)%encPartitions, encBatch, k*encBatch+w*997)); err != nil {
			return 0, err
		}
		return encBatch, nil
	})
	r := result.Result{
		Key:    key,
		System: result.Lethe, Scenario: "encrypt-push", Label: fmt.Sprintf("push batch %d, %d clients, encryption %s", encBatch, encClients, mode),
		Payload: size, Batch: encBatch, Clients: encClients, Partitions: encPartitions, Unit: "msg/s",
		Ceiling: CeilingKeyForBatch(encBatch, size),
	}.FromOutcome(out)
	r.PeakRSSMiB = env.peakMiB()
	r.Notes = fmt.Sprintf("%s messages pushed", meter.Group(out.Items))
	return r
}

// encryptedDrain pops and acks what the push wrote, in one group.
func encryptedDrain(ctx context.Context, env *Env, c *client, queue, mode string, size int, total int64) result.Result {
	env.settle(ctx)
	key := fmt.Sprintf("lethe/encrypt-pop-ack/%s/%d", mode, size)
	out := meter.Run(ctx, meter.Spec{
		Name: fmt.Sprintf("lethe pop+ack encryption %s %s", mode, payload.Label(size)),
		Unit: "msg", Workers: encClients, Duration: env.Plan.DrainLimit, Total: total, Out: env.Out,
		Window: env.window(ctx, key),
	}, func(ctx context.Context, w int) (int, error) {
		msgs, err := c.pop(ctx, queue, "enc", consumeBatch, 0, false)
		if err != nil {
			return 0, err
		}
		if len(msgs) == 0 {
			meter.Sleep(ctx, 5*time.Millisecond)
			return 0, nil
		}
		return len(msgs), c.ack(ctx, "enc", msgs)
	})
	r := result.Result{
		Key:    key,
		System: result.Lethe, Scenario: "encrypt-pop-ack", Label: fmt.Sprintf("pop+ack, %d consumers, encryption %s", encClients, mode),
		Payload: size, Batch: consumeBatch, Clients: encClients, Partitions: encPartitions, Groups: 1, Unit: "msg/s",
		Ceiling: fmt.Sprintf("ceiling/segment-read/%d", size),
	}.FromOutcome(out)
	r.PeakRSSMiB = env.peakMiB()
	r.Notes = drainNote(out, int(total))
	return r
}
