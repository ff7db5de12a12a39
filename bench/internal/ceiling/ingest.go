package ceiling

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
	"github.com/lethe-mq/lethe/bench/internal/stack"
)

const (
	segmentConns = 8
	insertConns  = 64
)

// IngestSegments writes rows of 100 length-prefixed frames, one row per
// autocommitted INSERT, from 8 connections. The rows stay for ReadSegments.
func IngestSegments(ctx context.Context, env *Env, size int) error {
	return ingestRows(ctx, env, size, framesPerRow, 0, fmt.Sprintf("ceiling/segment-ingest/%d", size),
		"raw segment ingest: rows of 100 frames, 8 connections, one row per transaction")
}

// IngestSmallSegments is IngestSegments with rows of 10 frames: the shape a
// push of batch 10 to a partition of its own writes, so what PostgreSQL
// alone pays per message at that shape. Its rows go to partitions of their
// own (100 on), which ReadSegments does not read.
func IngestSmallSegments(ctx context.Context, env *Env, size int) error {
	return ingestRows(ctx, env, size, smallFramesPerRow, 100, fmt.Sprintf("ceiling/segment-ingest-10/%d", size),
		"raw segment ingest: rows of 10 frames, 8 connections, one row per transaction")
}

// smallFramesPerRow is the row of IngestSmallSegments.
const smallFramesPerRow = 10

// ingestRows writes rows of perRow frames from 8 connections, connection w
// to partition firstPartition + w.
func ingestRows(ctx context.Context, env *Env, size, perRow, firstPartition int, key, label string) error {
	pool, err := newPool(ctx, env, segmentConns)
	if err != nil {
		return err
	}
	defer pool.Close()
	blobs := segmentBlobs(uint64(size)+uint64(perRow), 32, perRow, size)
	next := make([]int64, segmentConns)
	env.settle(ctx)
	cores := stack.CoresFrom(0, time.Now().Add(env.Plan.Warmup))
	out := meter.Run(ctx, meter.Spec{
		Name: fmt.Sprintf("ceiling segment ingest (rows of %d) %s", perRow, payload.Label(size)), Unit: "msg", Workers: segmentConns,
		Warmup: env.Plan.Warmup, Duration: env.Plan.Duration, Latency: true, Out: env.Out, Window: env.window(ctx, key),
	}, func(ctx context.Context, w int) (int, error) {
		base := next[w]
		blob := blobs[int(base/int64(perRow))%len(blobs)]
		now := time.Now()
		_, err := pool.Exec(ctx, `INSERT INTO bench_raw.segments VALUES ($1, $2, $3, $4, $5, $5, $6, $7)`,
			firstPartition+w, base, base+int64(perRow)-1, perRow, now, len(blob), blob)
		if err != nil {
			return 0, err
		}
		next[w] = base + int64(perRow)
		return perRow, nil
	})
	r := result.Result{
		Key: key, System: result.Ceiling, Scenario: "segment-ingest", Label: label, Payload: size,
		Batch: perRow, Clients: segmentConns, Partitions: segmentConns, Unit: "msg/s",
	}.FromOutcome(out)
	r.Notes = cores().Note(runtime.NumCPU(), r.Value) // lethe, idle then, counts among the others
	lat := out.Latency
	r.Latency = &lat
	env.Sink.Add(r)
	return nil
}

// InsertPerMessage writes one row per message, one autocommitted INSERT
// each, from 64 connections.
func InsertPerMessage(ctx context.Context, env *Env, size int) error {
	pool, err := newPool(ctx, env, insertConns)
	if err != nil {
		return err
	}
	defer pool.Close()
	payloads := payload.Pool(uint64(size)+1, 1024, size)
	seq := make([]int, insertConns)
	env.settle(ctx)
	key := fmt.Sprintf("ceiling/insert/%d", size)
	cores := stack.CoresFrom(0, time.Now().Add(env.Plan.Warmup))
	out := meter.Run(ctx, meter.Spec{
		Name: "ceiling INSERT per message " + payload.Label(size), Unit: "msg", Workers: insertConns,
		Warmup: env.Plan.Warmup, Duration: env.Plan.Duration, Latency: true, Out: env.Out, Window: env.window(ctx, key),
	}, func(ctx context.Context, w int) (int, error) {
		seq[w]++
		_, err := pool.Exec(ctx, `INSERT INTO bench_raw.messages (partition_id, created_at, payload) VALUES ($1, $2, $3)`,
			w, time.Now(), payloads[(seq[w]*insertConns+w)%len(payloads)])
		if err != nil {
			return 0, err
		}
		return 1, nil
	})
	r := result.Result{
		Key: key, System: result.Ceiling, Scenario: "insert",
		Label: "raw one INSERT per message, 64 connections, one transaction each", Payload: size,
		Batch: 1, Clients: insertConns, Unit: "msg/s",
	}.FromOutcome(out)
	r.Notes = cores().Note(runtime.NumCPU(), r.Value) // lethe, idle then, counts among the others
	lat := out.Latency
	r.Latency = &lat
	env.Sink.Add(r)
	return nil
}

// InsertLatency offers single-message INSERTs at the end-to-end latency
// run's load: the least a durable push can cost at that load.
func InsertLatency(ctx context.Context, env *Env, size int) error {
	const senders = 32
	pool, err := newPool(ctx, env, senders)
	if err != nil {
		return err
	}
	defer pool.Close()
	payloads := payload.Pool(uint64(size)+2, 256, size)
	var rec meter.Recorder
	env.settle(ctx)
	measureFrom := time.Now().Add(env.Plan.Warmup)
	key := fmt.Sprintf("ceiling/insert-latency/%d", size)
	endWindow := env.Profile.WindowFrom(ctx, key, measureFrom, env.Plan.LatencyDuration)
	var k atomic.Int64
	var errs meter.Errors
	prog := meter.StartProgress(env.Out, "ceiling INSERT latency "+payload.Label(size), func() string {
		s := rec.Summary()
		return fmt.Sprintf("%d msg/s offered: p50 %.2f ms p99 %.2f ms", env.Plan.LatencyRate, s.P50, s.P99)
	})
	cores := stack.CoresFrom(0, measureFrom)
	_, missed := meter.Paced(ctx, env.Plan.LatencyRate, senders, env.Plan.Warmup+env.Plan.LatencyDuration, func(ctx context.Context) {
		at := time.Now()
		i := k.Add(1)
		_, err := pool.Exec(ctx, `INSERT INTO bench_raw.messages (partition_id, created_at, payload) VALUES ($1, $2, $3)`,
			0, at, payloads[i%int64(len(payloads))])
		if err != nil {
			errs.Note(err)
			return
		}
		if !at.Before(measureFrom) {
			rec.Add(time.Since(at))
		}
	})
	busy := cores().String(runtime.NumCPU())
	prog.Stop()
	endWindow()
	s := rec.Summary()
	env.Sink.Add(result.Result{
		Key: key, System: result.Ceiling, Scenario: "insert-latency",
		Label:   fmt.Sprintf("raw INSERT + commit latency at %d msg/s", env.Plan.LatencyRate),
		Payload: size, Batch: 1, Clients: senders, Unit: "ms", Value: s.P50, Latency: &s,
		Count: int64(s.Count), Seconds: env.Plan.LatencyDuration.Seconds(), Errors: errs.Count(), FirstError: errs.First(),
		Notes: fmt.Sprintf("%d sends skipped (all %d senders busy); %s", missed, senders, busy),
	})
	return nil
}
