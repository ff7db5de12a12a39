package lethebench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

// tierLoadRate is the push load (msg/s, batches of 10) measured idle and
// while a tier drop or move runs.
const tierLoadRate = 2000

// fullRun is what POST /api/v1/test/retention/run answers.
type fullRun struct {
	TierDropped struct{ Frames, Bytes int64 } `json:"tierDropped"`
	HeldMoved   struct{ Frames, Bytes int64 } `json:"heldMoved"`
	Leaves      int                           `json:"leavesDropped"`
	Failures    []string                      `json:"failures"`
}

// TierDrop writes about Plan.TierDropBytes of frames into a 1w queue's
// partition of nine days ago, finished (no group wants them), and times
// the tier check that drops it: the drop's duration, push p99 during it
// against idle, and the database's size before and after (space comes back
// at once, unlike row deletes). The server must run with
// LETHE_TEST_CLOCK=1 (the bench sets it): the check is started with POST
// /api/v1/test/retention/run, which answers when it is done.
func TierDrop(ctx context.Context, env *Env, size int) error {
	frames := max(1000, int(env.Plan.TierDropBytes/int64(size)))
	bl := backlog{Queue: env.name("tierdrop-%d", size), Partitions: 8, Frames: frames, PerSegment: 1000, Size: size,
		At: time.Now().Add(-9 * 24 * time.Hour), Options: map[string]any{"retentionTier": "1w"}}
	if _, err := bl.write(ctx, env); err != nil {
		return err
	}
	before, err := dbSize(ctx, env)
	if err != nil {
		return err
	}
	r := result.Result{Key: fmt.Sprintf("lethe/tier-drop/%d", size), System: result.Lethe, Scenario: "tier-drop",
		Label: fmt.Sprintf("tier check dropping a 1w partition of %s frames (%s)", meter.Group(int64(frames)),
			humanBytes(int64(frames)*int64(size))), Payload: size, Partitions: bl.Partitions, Unit: "s"}
	run, secs, base, during, err := duringRun(ctx, env, size, "tier drop", fmt.Sprintf("lethe/tier-drop/%d", size))
	if err != nil {
		return err
	}
	after, err := dbSize(ctx, env)
	if err != nil {
		return err
	}
	r.Value, r.Seconds, r.Count = secs, secs, run.TierDropped.Frames
	r.Baseline, r.Latency = &base, &during
	r.Notes = fmt.Sprintf("dropped %s frames in %d leaves in %.3f s (the whole tier check); push p99 %.1f ms during vs %.1f ms idle at %d msg/s; database %s before, %s after",
		meter.Group(run.TierDropped.Frames), run.Leaves, secs, during.P99, base.P99, tierLoadRate, humanBytes(before), humanBytes(after))
	if run.TierDropped.Frames < int64(frames) {
		r.Skipped = fmt.Sprintf("the tier check dropped %d of %d frames: does the server run with LETHE_TEST_CLOCK=1?", run.TierDropped.Frames, frames)
	}
	env.Sink.Add(r)
	return nil
}

// HeldMove writes Plan.HeldMoveFrames frames into an expired 1w partition
// of a queue with two required groups that have read nothing, so every
// frame is pending, and times the tier check moving them to the held area
// (messages/s, push p99 during against idle). Then one group pops and acks
// everything, held and live frames: the pop over the held area.
func HeldMove(ctx context.Context, env *Env, size int) error {
	bl := backlog{Queue: env.name("heldmove-%d", size), Partitions: 8, Frames: env.Plan.HeldMoveFrames, PerSegment: 100,
		Size: size, At: time.Now().Add(-9 * 24 * time.Hour),
		Options: map[string]any{"retentionTier": "1w", "requiredGroups": []string{"a", "b"}}}
	if _, err := bl.write(ctx, env); err != nil {
		return err
	}
	run, secs, base, during, err := duringRun(ctx, env, size, "held move", fmt.Sprintf("lethe/held-move/%d", size))
	if err != nil {
		return err
	}
	r := result.Result{Key: fmt.Sprintf("lethe/held-move/%d", size), System: result.Lethe, Scenario: "held-move",
		Label:   fmt.Sprintf("tier check moving %s pending frames (two groups) to the held area", meter.Group(int64(bl.Frames))),
		Payload: size, Partitions: bl.Partitions, Groups: 2, Unit: "msg/s", Count: run.HeldMoved.Frames, Seconds: secs,
		Baseline: &base, Latency: &during}
	if secs > 0 {
		r.Value = float64(run.HeldMoved.Frames) / secs
	}
	r.Notes = fmt.Sprintf("moved %s frames in %.2f s (the whole tier check, RETENTION_MAX_BUSY %s); push p99 %.1f ms during vs %.1f ms idle at %d msg/s",
		meter.Group(run.HeldMoved.Frames), secs, maxBusy(), during.P99, base.P99, tierLoadRate)
	if run.HeldMoved.Frames < int64(bl.Frames) {
		r.Skipped = fmt.Sprintf("the tier check moved %d of %d frames", run.HeldMoved.Frames, bl.Frames)
	}
	env.Sink.Add(r)
	return popHeld(ctx, env, bl, size)
}

// popHeld drains group a over the held frames and some live ones.
func popHeld(ctx context.Context, env *Env, bl backlog, size int) error {
	c := newClient(env.URL, 4)
	defer c.close()
	b := newBodies(bl.Queue, bl.Partitions, payload.Pool(7, 256, size))
	live := bl.Frames / 10
	for k := 0; k < live; k += 100 {
		if err := c.push(ctx, b.make(k/100%bl.Partitions, 100, k)); err != nil {
			return fmt.Errorf("held pop: push live frames: %w", err)
		}
	}
	total := bl.Frames + live
	key := fmt.Sprintf("lethe/pop-held/%d", size)
	out := meter.Run(ctx, meter.Spec{Name: "lethe pop held " + payload.Label(size), Unit: "msg", Workers: 4,
		Duration: env.Plan.DrainLimit, Total: int64(total), Out: env.Out, Window: env.window(ctx, key)},
		func(ctx context.Context, _ int) (int, error) {
			msgs, err := c.pop(ctx, bl.Queue, "a", consumeBatch, 0, false)
			if err != nil || len(msgs) == 0 {
				meter.Sleep(ctx, 5*time.Millisecond)
				return 0, err
			}
			return len(msgs), c.ack(ctx, "a", msgs)
		})
	r := result.Result{Key: key, System: result.Lethe, Scenario: "pop-held",
		Label:   fmt.Sprintf("pop+ack over %s held and %s live frames", meter.Group(int64(bl.Frames)), meter.Group(int64(live))),
		Payload: size, Partitions: bl.Partitions, Batch: consumeBatch, Clients: 4, Unit: "msg/s",
		Ceiling: fmt.Sprintf("ceiling/segment-read/%d", size)}.FromOutcome(out)
	r.Notes = drainNote(out, total)
	env.Sink.Add(r)
	return nil
}

// duringRun measures push latency idle for Plan.SweepBaseline, then runs
// one full retention cycle under the same load and answers it, its
// duration and both latency distributions. The cycle is the window -profile
// records as the result named key.
func duringRun(ctx context.Context, env *Env, size int, what, key string) (run fullRun, secs float64, base, during meter.Summary, err error) {
	loadQueue := env.name("tierload-%d", size)
	c := newClient(env.URL, sweepLoadSenders+1)
	defer c.close()
	b := newBodies(loadQueue, sweepLoadPartitions, payload.Pool(13, 256, size))
	for _, body := range b.prime() {
		if err := c.push(ctx, body); err != nil {
			return run, 0, base, during, fmt.Errorf("%s: create load partitions: %w", what, err)
		}
	}
	env.settle(ctx)
	var idle, busy meter.Recorder
	var running atomic.Bool
	var seq atomic.Int64
	loadCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		meter.Paced(loadCtx, tierLoadRate/sweepLoadBatch, sweepLoadSenders, 24*time.Hour, func(ctx context.Context) {
			k := int(seq.Add(1))
			at, during := time.Now(), running.Load()
			if c.push(ctx, b.make(k%sweepLoadPartitions, sweepLoadBatch, k*sweepLoadBatch)) != nil {
				return
			}
			if during {
				busy.Add(time.Since(at))
			} else {
				idle.Add(time.Since(at))
			}
		})
	}()
	meter.Sleep(ctx, env.Plan.SweepBaseline)
	endWindow := env.Profile.Window(ctx, key, 0)
	running.Store(true)
	began := time.Now()
	var raw json.RawMessage
	_, err = c.do(ctx, "POST", "/api/v1/test/retention/run", nil, &raw)
	secs = time.Since(began).Seconds()
	running.Store(false)
	stop()
	<-done
	endWindow()
	if err != nil {
		return run, secs, base, during, fmt.Errorf("%s: run the tier check (does lethe run with LETHE_TEST_CLOCK=1?): %w", what, err)
	}
	if err := json.Unmarshal(raw, &run); err != nil {
		return run, secs, base, during, fmt.Errorf("%s: %w", what, err)
	}
	if len(run.Failures) > 0 {
		return run, secs, base, during, fmt.Errorf("%s: the cycle failed: %v", what, run.Failures)
	}
	return run, secs, idle.Summary(), busy.Summary(), nil
}

func dbSize(ctx context.Context, env *Env) (int64, error) {
	var n int64
	if err := env.Pool.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&n); err != nil {
		return 0, fmt.Errorf("database size: %w", err)
	}
	return n, nil
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
