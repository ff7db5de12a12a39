package ceiling

import (
	"context"
	"fmt"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

// The layout of lethe's tier-drop backlog (lethebench.TierDrop).
const (
	dropRowFrames  = 1000
	dropPartitions = 8
)

// DropTable fills a table shaped like a segment leaf with what lethe's
// tier-drop scenario drops (Plan.TierDropBytes of frames in rows of 1,000
// over 8 partitions), then times a plain DROP TABLE of it while the tier
// load INSERTs: what PostgreSQL and this disk charge for dropping those
// bytes, and the insert p99 during the drop against idle (and in the
// second after it, when the freed files' unlinking and the next
// checkpoint may still cost).
func DropTable(ctx context.Context, env *Env, size int) error {
	pool, err := newPool(ctx, env, tierLoadSenders+1)
	if err != nil {
		return err
	}
	defer pool.Close()
	frames := max(dropRowFrames, int(env.Plan.TierDropBytes/int64(size)))
	if err := createLeaf(ctx, pool, "drop_leaf"); err != nil {
		return err
	}
	fill := leafFill{table: "drop_leaf", frames: frames, perRow: dropRowFrames, partitions: dropPartitions, size: size}
	if _, err := fillLeaf(ctx, env, pool, fill); err != nil {
		return err
	}
	var bytes int64
	if err := pool.QueryRow(ctx, `SELECT pg_total_relation_size('bench_raw.drop_leaf')`).Scan(&bytes); err != nil {
		return fmt.Errorf("ceiling drop: size: %w", err)
	}
	env.settle(ctx)
	load, err := startInsertLoad(ctx, pool, size)
	if err != nil {
		return err
	}
	meter.Sleep(ctx, env.Plan.SweepBaseline)
	began := time.Now()
	_, err = pool.Exec(ctx, `DROP TABLE bench_raw.drop_leaf`)
	ended := time.Now()
	meter.Sleep(ctx, time.Second)
	load.finish()
	if err != nil {
		return fmt.Errorf("ceiling drop: %w", err)
	}
	idle, during := load.rec.Started(load.began, began), load.rec.Overlapping(began, ended)
	after := load.rec.Started(ended, ended.Add(time.Second))
	secs := ended.Sub(began).Seconds()
	env.Sink.Add(result.Result{
		Key: fmt.Sprintf("ceiling/table-drop/%d", size), System: result.Ceiling, Scenario: "table-drop",
		Label: fmt.Sprintf("raw DROP TABLE of a segment-leaf table of %s frames (%s of files)",
			meter.Group(int64(frames)), mib(bytes)),
		Payload: size, Partitions: dropPartitions, Unit: "s", Value: secs, Seconds: secs, Count: int64(frames),
		Latency: &during, Baseline: &idle,
		Notes: fmt.Sprintf("insert p99 %.1f ms during the drop (n=%d), %.1f ms in the second after, %.1f ms idle; %s",
			during.P99, during.Count, after.P99, idle.P99, load.note()),
	})
	_, err = pool.Exec(ctx, `DROP TABLE bench_raw.tier_load`)
	return err
}

func mib(bytes int64) string { return fmt.Sprintf("%.1f MiB", float64(bytes)/(1<<20)) }
