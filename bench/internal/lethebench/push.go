package lethebench

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

// PushShape is one cell of the push matrix.
type PushShape struct {
	Batch, Clients, Partitions int
}

// PushShapes is batch 1 from 64 clients and batches of 10 and 100 from 8,
// each over every partition count of the plan.
func PushShapes(partitions []int) []PushShape {
	var out []PushShape
	for _, b := range []struct{ batch, clients int }{{1, 64}, {10, 8}, {100, 8}} {
		for _, p := range partitions {
			out = append(out, PushShape{Batch: b.batch, Clients: b.clients, Partitions: p})
		}
	}
	return out
}

// CeilingKeyForBatch names the raw figure a push of this batch size is
// compared with: one INSERT per message for single pushes, segment rows of
// 100 frames for batches.
func CeilingKeyForBatch(batch, size int) string {
	if batch == 1 {
		return fmt.Sprintf("ceiling/insert/%d", size)
	}
	return fmt.Sprintf("ceiling/segment-ingest/%d", size)
}

// Push measures one cell: each request carries Batch messages for one
// partition, requests go round-robin over the partitions.
func Push(ctx context.Context, env *Env, s PushShape, size int) error {
	queue := env.name("push-b%d-p%d-%d", s.Batch, s.Partitions, size)
	parts := fmt.Sprintf("%s partitions", meter.Group(int64(s.Partitions)))
	if s.Partitions == 1 {
		parts = "1 partition"
	}
	label := fmt.Sprintf("push batch %d, %d clients, %s", s.Batch, s.Clients, parts)
	r := result.Result{
		Key:    fmt.Sprintf("lethe/push/b%d/p%d/%d", s.Batch, s.Partitions, size),
		System: result.Lethe, Scenario: "push", Label: label, Payload: size,
		Batch: s.Batch, Clients: s.Clients, Partitions: s.Partitions, Unit: "msg/s",
		Ceiling: CeilingKeyForBatch(s.Batch, size),
	}
	c := newClient(env.URL, s.Clients)
	defer c.close()
	b := newBodies(queue, s.Partitions, payload.Pool(uint64(s.Batch*7+s.Partitions), 1024, size))
	for _, body := range b.prime() {
		if err := c.push(ctx, body); err != nil {
			return fmt.Errorf("%s: create partitions: %w", label, err)
		}
	}
	env.settle(ctx)
	groups0, parts0, err := c.commitGroups(ctx)
	if err != nil {
		return err
	}
	seq := make([]int, s.Clients)
	cores := env.coresFrom(time.Now().Add(env.Plan.Warmup))
	out := meter.Run(ctx, meter.Spec{
		Name: fmt.Sprintf("lethe push b%d c%d p%d %s", s.Batch, s.Clients, s.Partitions, payload.Label(size)),
		Unit: "msg", Workers: s.Clients, Warmup: env.Plan.Warmup, Duration: env.Plan.Duration,
		Latency: true, Out: env.Out, Window: env.window(ctx, r.Key),
	}, func(ctx context.Context, w int) (int, error) {
		k := seq[w]
		seq[w]++
		part := (w + k*s.Clients) % s.Partitions
		if err := c.push(ctx, b.make(part, s.Batch, k*s.Batch+w*997)); err != nil {
			return 0, err
		}
		return s.Batch, nil
	})
	busy := cores()
	r = r.FromOutcome(out)
	lat := out.Latency
	r.Latency = &lat
	r.PeakRSSMiB = env.peakMiB()
	r.Notes = fmt.Sprintf("request p50 %.1f ms, p99 %.1f ms", lat.P50, lat.P99)
	groups1, parts1, err := c.commitGroups(ctx)
	if err != nil {
		return err
	}
	if n := groups1 - groups0; n > 0 {
		r.Notes += fmt.Sprintf("; %s commit groups, %.1f partitions each on average (warmup included)",
			meter.Group(int64(n)), (parts1-parts0)/n)
	}
	r.Notes += "; " + busy.Note(runtime.NumCPU(), r.Value)
	env.Sink.Add(r)
	return nil
}
