package lethebench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/client/api"
)

// tierLoadRate is the push load (msg/s, batches of 10) measured idle and
// while a tier drop or move runs; the raw drop and move ceilings offer
// the same load as INSERTs.
const tierLoadRate = 2000

// workSeconds is a leaf drop's own time: detach, audit and drop.
func workSeconds(d api.RetentionLeafDrop) float64 { return (d.DetachMs + d.AuditMs + d.DropMs) / 1000 }

// biggestDrop is the leaf of tier t that run dropped holding the most
// bytes; false when it dropped none.
func biggestDrop(run api.RetentionRun, t string) (api.RetentionLeafDrop, bool) {
	var top api.RetentionLeafDrop
	found := false
	for _, d := range run.LeafDrops {
		if d.Tier == t && (!found || d.Bytes > top.Bytes) {
			top, found = d, true
		}
	}
	return top, found
}

// tierRun is one full retention cycle run under the push load: its answer,
// when it began and how long it took, and every push's latency with its
// start, to cut to the idle time, the whole check or a span inside it.
type tierRun struct {
	api.RetentionRun
	began  time.Time
	secs   float64
	pushes *meter.Stamped
	loadAt time.Time // the load's start, after the first pushes warmed it
}

// idle is the push latency before the check began.
func (t *tierRun) idle() meter.Summary { return t.pushes.Started(t.loadAt, t.began) }

// whole is the push latency while the check ran.
func (t *tierRun) whole() meter.Summary {
	return t.pushes.Overlapping(t.began, t.began.Add(time.Duration(t.secs*float64(time.Second))))
}

// duringRun measures push latency idle for Plan.SweepBaseline, then runs
// one full retention cycle under the same load and answers it, with every
// push's latency stamped by its start. The cycle is the window -profile
// records as the result named key.
func duringRun(ctx context.Context, env *Env, size int, what, key string) (*tierRun, error) {
	loadQueue := env.name("tierload-%d", size)
	c := newClient(env.URL, sweepLoadSenders+1)
	defer c.close()
	b := newBodies(loadQueue, sweepLoadPartitions, payload.Pool(13, 256, size))
	for _, body := range b.prime() {
		if err := c.push(ctx, body); err != nil {
			return nil, fmt.Errorf("%s: create load partitions: %w", what, err)
		}
	}
	env.settle(ctx)
	t := &tierRun{pushes: &meter.Stamped{}, loadAt: time.Now()}
	var seq atomic.Int64
	loadCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		meter.Paced(loadCtx, tierLoadRate/sweepLoadBatch, sweepLoadSenders, 24*time.Hour, func(ctx context.Context) {
			k := int(seq.Add(1))
			at := time.Now()
			if c.push(ctx, b.make(k%sweepLoadPartitions, sweepLoadBatch, k*sweepLoadBatch)) == nil {
				t.pushes.Add(at, time.Since(at))
			}
		})
	}()
	meter.Sleep(ctx, env.Plan.SweepBaseline)
	endWindow := env.Profile.Window(ctx, key, 0)
	t.began = time.Now()
	var raw json.RawMessage
	_, err := c.do(ctx, "POST", "/api/v1/test/retention/run", nil, &raw)
	t.secs = time.Since(t.began).Seconds()
	stop()
	<-done
	endWindow()
	if err != nil {
		return nil, fmt.Errorf("%s: run the tier check (does lethe run with LETHE_TEST_CLOCK=1?): %w", what, err)
	}
	if err := json.Unmarshal(raw, &t.RetentionRun); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(t.Failures) > 0 {
		return nil, fmt.Errorf("%s: the cycle failed: %v", what, t.Failures)
	}
	return t, nil
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
