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

// consumeBatch is how many messages one pop asks for.
const consumeBatch = 100

// widePerPartition is how many messages each partition of the wide
// backlog holds: a pop of 100 takes one partition's 20.
const widePerPartition = 20

// Consume writes one backlog and drains it with one consumer group
// (pop+ack), then with 5 and with 10 groups at once (fan-out): every group
// reads every message. Then one group drains a backlog spread thin over
// many partitions (Plan.WidePartitions), where each pop's listing of the
// queue's partitions costs the most.
func Consume(ctx context.Context, env *Env, size int) error {
	bl := backlog{
		Queue: env.name("consume-%d", size), Partitions: env.Plan.ConsumePartitions,
		Frames: env.Plan.ConsumeBacklog, PerSegment: 100, Size: size, At: time.Now(), Hashes: true,
	}
	if _, err := bl.write(ctx, env); err != nil {
		return err
	}
	for _, groups := range []int{1, 5, 10} {
		if err := drain(ctx, env, bl, groups, false); err != nil {
			return err
		}
	}
	wide := backlog{
		Queue: env.name("consume-wide-%d", size), Partitions: env.Plan.WidePartitions,
		Frames: env.Plan.WidePartitions * widePerPartition, PerSegment: widePerPartition, Size: size, At: time.Now(), Hashes: true,
	}
	if _, err := wide.write(ctx, env); err != nil {
		return err
	}
	return drain(ctx, env, wide, 1, true)
}

// drain has 8 consumers (two per group when fanning out) pop batches of
// 100 and ack them, until every group has everything or the limit passes.
// wide names the wide backlog's row.
func drain(ctx context.Context, env *Env, bl backlog, groups int, wide bool) error {
	size := bl.Size
	workers := 8
	scenario, unit, label := "pop-ack", "msg/s", "pop+ack, 1 consumer group, 8 consumers"
	key := fmt.Sprintf("lethe/pop-ack/%d", size)
	switch {
	case wide:
		label = fmt.Sprintf("pop+ack, 1 consumer group, 8 consumers, %s partitions of %d messages",
			meter.Group(int64(bl.Partitions)), widePerPartition)
		key = fmt.Sprintf("lethe/pop-ack-wide/%d", size)
	case groups > 1:
		workers = 2 * groups
		scenario, unit = "fanout", "deliveries/s"
		label = fmt.Sprintf("fan-out to %d groups, %d consumers", groups, workers)
		key = fmt.Sprintf("lethe/fanout/g%d/%d", groups, size)
	}
	names := make([]string, groups)
	for g := range names {
		names[g] = fmt.Sprintf("g%d-%d", groups, g)
	}
	c := newClient(env.URL, workers)
	defer c.close()
	env.settle(ctx)
	// Empty pops while the backlog lasts are pops that found every
	// partition with work leased; the result's notes count them.
	var pops, empty atomic.Int64
	cores := env.coresFrom(time.Now())
	out := meter.Run(ctx, meter.Spec{
		Name: fmt.Sprintf("lethe %s %s", scenarioShort(groups), payload.Label(size)),
		Unit: "msg", Workers: workers, Duration: env.Plan.DrainLimit,
		Total: int64(groups * bl.Frames), Out: env.Out, Window: env.window(ctx, key),
	}, func(ctx context.Context, w int) (int, error) {
		group := names[w%groups]
		msgs, err := c.pop(ctx, bl.Queue, group, consumeBatch, 0, false)
		if err != nil {
			return 0, err
		}
		pops.Add(1)
		if len(msgs) == 0 {
			empty.Add(1)
			meter.Sleep(ctx, 5*time.Millisecond) // every partition leased or done
			return 0, nil
		}
		if err := c.ack(ctx, group, msgs); err != nil {
			return 0, err
		}
		return len(msgs), nil
	})
	busy := cores().String(runtime.NumCPU())
	r := result.Result{
		Key: key, System: result.Lethe, Scenario: scenario, Label: label, Payload: size,
		Batch: consumeBatch, Clients: workers, Partitions: bl.Partitions, Groups: groups, Unit: unit,
		Ceiling: fmt.Sprintf("ceiling/segment-read/%d", size),
	}.FromOutcome(out)
	r.PeakRSSMiB = env.peakMiB()
	r.Notes = fmt.Sprintf("%s; %s of %s pops empty; %s", drainNote(out, groups*bl.Frames),
		meter.Group(empty.Load()), meter.Group(pops.Load()), busy)
	env.Sink.Add(r)
	return nil
}

func scenarioShort(groups int) string {
	if groups == 1 {
		return "pop+ack"
	}
	return fmt.Sprintf("fan-out %d groups", groups)
}

// drainNote says whether the backlog was drained or the time limit hit.
func drainNote(out meter.Outcome, total int) string {
	if out.Drained {
		return fmt.Sprintf("drained %s in %.1f s", meter.Group(int64(total)), out.Elapsed.Seconds())
	}
	return fmt.Sprintf("time limit: %s of %s in %.1f s", meter.Group(out.Items), meter.Group(int64(total)), out.Elapsed.Seconds())
}
