package lethebench

import (
	"context"
	"fmt"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

// TierDrop writes about Plan.TierDropBytes of frames into a 1w queue's
// partition of nine days ago, finished (no group wants them), and times
// the tier check that drops it. The figure is the drop's own time
// (detach, audit and DROP TABLE of that leaf, as the server reports it in
// leafDrops, without the duty cycle's rests) against the raw DROP TABLE
// of the same bytes (ceiling/table-drop); push p99 is cut to the drop's
// span, and the notes give the whole check's time and p99 and the
// database's size before and after (space comes back at once, unlike row
// deletes). The server must run with LETHE_TEST_CLOCK=1 (the bench sets
// it): the check is started with POST /api/v1/test/retention/run, which
// answers when it is done.
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
		Label: fmt.Sprintf("dropping a 1w partition of %s frames (%s): detach, audit, DROP TABLE", meter.Group(int64(frames)),
			humanBytes(int64(frames)*int64(size))), Payload: size, Partitions: bl.Partitions, Unit: "s",
		Ceiling: fmt.Sprintf("ceiling/table-drop/%d", size)}
	run, err := duringRun(ctx, env, size, "tier drop", fmt.Sprintf("lethe/tier-drop/%d", size))
	if err != nil {
		return err
	}
	after, err := dbSize(ctx, env)
	if err != nil {
		return err
	}
	r.Count = run.TierDropped.Frames
	leaf, ok := biggestDrop(run.RetentionRun, "1w")
	if !ok || run.TierDropped.Frames < int64(frames) {
		r.Skipped = fmt.Sprintf("the tier check dropped %d of %d frames (leaves %+v): does the server run with LETHE_TEST_CLOCK=1?",
			run.TierDropped.Frames, frames, run.LeafDrops)
		env.Sink.Add(r)
		return nil
	}
	idle, span, whole := run.idle(), run.pushes.Overlapping(leaf.StartedAt, leaf.EndedAt), run.whole()
	r.Value, r.Seconds = workSeconds(leaf), workSeconds(leaf)
	r.Baseline, r.Latency = &idle, &span
	r.Notes = fmt.Sprintf("leaf %s of %s: detach %.1f ms, audit %.1f ms, drop %.1f ms (work; %.3f s from detach to the end of DROP TABLE with the rests); "+
		"push p99 %.1f ms during the drop (n=%d) vs %.1f ms idle at %d msg/s; the whole tier check %.3f s (%d leaves, %s frames), push p99 %.1f ms during it; database %s before, %s after",
		leaf.Leaf, humanBytes(leaf.Bytes), leaf.DetachMs, leaf.AuditMs, leaf.DropMs, leaf.EndedAt.Sub(leaf.StartedAt).Seconds(),
		span.P99, span.Count, idle.P99, tierLoadRate, run.secs, run.LeavesDropped, meter.Group(run.TierDropped.Frames), whole.P99,
		humanBytes(before), humanBytes(after))
	env.Sink.Add(r)
	return nil
}

// HeldMove writes Plan.HeldMoveFrames frames into an expired 1w partition
// of a queue with two required groups that have read nothing, so every
// frame is pending, and times the tier check moving them to the held area
// (messages/s, push p99 during against idle), twice against the raw move
// of the same bytes (ceiling/segment-move): over the whole check, the
// duty cycle's rests included, and over the settle steps' work time
// alone. Then one group pops and acks everything, held and live frames:
// the pop over the held area.
func HeldMove(ctx context.Context, env *Env, size int) error {
	bl := backlog{Queue: env.name("heldmove-%d", size), Partitions: 8, Frames: env.Plan.HeldMoveFrames, PerSegment: 100,
		Size: size, At: time.Now().Add(-9 * 24 * time.Hour),
		Options: map[string]any{"retentionTier": "1w", "requiredGroups": []string{"a", "b"}}}
	if _, err := bl.write(ctx, env); err != nil {
		return err
	}
	run, err := duringRun(ctx, env, size, "held move", fmt.Sprintf("lethe/held-move/%d", size))
	if err != nil {
		return err
	}
	idle, whole := run.idle(), run.whole()
	work := run.SettleWorkMs / 1000
	for _, v := range []struct {
		key, label string
		secs       float64
	}{
		{"held-move", "tier check moving %s pending frames (two groups) to the held area", run.secs},
		{"held-move-work", "moving %s pending frames to the held area, settle steps' work time (rests excluded)", work},
	} {
		r := result.Result{Key: fmt.Sprintf("lethe/%s/%d", v.key, size), System: result.Lethe, Scenario: v.key,
			Label: fmt.Sprintf(v.label, meter.Group(int64(bl.Frames))), Payload: size, Partitions: bl.Partitions, Groups: 2,
			Unit: "msg/s", Count: run.HeldMoved.Frames, Seconds: v.secs, Baseline: &idle, Latency: &whole,
			Ceiling: fmt.Sprintf("ceiling/segment-move/%d", size)}
		if v.secs > 0 {
			r.Value = float64(run.HeldMoved.Frames) / v.secs
		}
		r.Notes = fmt.Sprintf("moved %s frames (%s) in %.2f s, the whole tier check (RETENTION_MAX_BUSY %s), of which the settle steps worked %.2f s (%.1f MiB/s); push p99 %.1f ms during vs %.1f ms idle at %d msg/s",
			meter.Group(run.HeldMoved.Frames), humanBytes(run.HeldMoved.Bytes), run.secs, maxBusy(), work,
			mibPerSecond(run.HeldMoved.Bytes, work), whole.P99, idle.P99, tierLoadRate)
		if run.HeldMoved.Frames < int64(bl.Frames) {
			r.Skipped = fmt.Sprintf("the tier check moved %d of %d frames", run.HeldMoved.Frames, bl.Frames)
		}
		env.Sink.Add(r)
	}
	return popHeld(ctx, env, bl, size)
}

func mibPerSecond(bytes int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(bytes) / (1 << 20) / secs
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
	r := result.Result{Key: fmt.Sprintf("lethe/pop-held/%d", size), System: result.Lethe, Scenario: "pop-held",
		Label:   fmt.Sprintf("pop+ack over %s held and %s live frames", meter.Group(int64(bl.Frames)), meter.Group(int64(live))),
		Payload: size, Partitions: bl.Partitions, Batch: consumeBatch, Clients: 4, Unit: "msg/s",
		Ceiling: fmt.Sprintf("ceiling/segment-read/%d", size)}.FromOutcome(out)
	r.Notes = drainNote(out, total)
	env.Sink.Add(r)
	return nil
}
