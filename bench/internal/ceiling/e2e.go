package ceiling

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
	"github.com/lethe-mq/lethe/bench/internal/stack"
)

// The raw end-to-end run has lethe's e2e shape: 32 senders, 8 consumers
// taking up to 100 rows a pop.
const (
	e2eSenders   = 32
	e2eConsumers = 8
	e2eBatch     = 100
)

const e2eSchemaSQL = `
CREATE TABLE IF NOT EXISTS bench_raw.queue (
    id          bigserial PRIMARY KEY,
    sent_at     timestamptz NOT NULL,
    lease_until timestamptz,
    payload     bytea NOT NULL);
CREATE INDEX IF NOT EXISTS queue_unleased ON bench_raw.queue (id) WHERE lease_until IS NULL;
TRUNCATE bench_raw.queue;`

// E2ELatency is the end-to-end run with nothing but PostgreSQL between
// producer and consumer: the same offered load of durable single-row
// INSERTs, and 8 consumers that lease rows with one UPDATE of rows picked
// FOR UPDATE SKIP LOCKED and delete them as their ack. A consumer that
// finds nothing waits until a push commits (woken in process, as lethe
// wakes its local long polls) or half a second passes. Pops and acks
// commit without waiting for the disk, as lethe's do. The figure is what a
// durable queue's delivery costs at that load on these cores with no
// broker's work at all: lethe's end-to-end row is held against it.
func E2ELatency(ctx context.Context, env *Env, size int) error {
	setup, err := newPool(ctx, env, 1)
	if err != nil {
		return err
	}
	_, err = setup.Exec(ctx, e2eSchemaSQL)
	setup.Close()
	if err != nil {
		return fmt.Errorf("ceiling e2e table: %w", err)
	}
	producers, err := newPool(ctx, env, e2eSenders)
	if err != nil {
		return err
	}
	defer producers.Close()
	// Pops and acks commit without waiting for the disk, as lethe's do.
	consumers, err := newPoolWith(ctx, env, e2eConsumers, map[string]string{"synchronous_commit": "off"})
	if err != nil {
		return err
	}
	defer consumers.Close()

	payloads := payload.Pool(uint64(size)+3, 256, size)
	var (
		e2e                 meter.Recorder
		sentMeasured, recvd atomic.Int64
		errs                meter.Errors
	)
	wake := make(chan struct{}, e2eConsumers)
	env.settle(ctx)
	measureFrom := time.Now().Add(env.Plan.Warmup)
	key := fmt.Sprintf("ceiling/e2e/%d", size)

	consumeCtx, stopConsumers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range e2eConsumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rawConsume(consumeCtx, consumers, wake, measureFrom, &e2e, &recvd, &errs)
		}()
	}

	endWindow := env.Profile.WindowFrom(ctx, key, measureFrom, env.Plan.LatencyDuration)
	prog := meter.StartProgress(env.Out, "ceiling e2e latency "+payload.Label(size), func() string {
		s := e2e.Summary()
		return fmt.Sprintf("%d msg/s offered: delivered %s, p50 %.2f ms p99 %.2f ms",
			env.Plan.LatencyRate, meter.Group(recvd.Load()), s.P50, s.P99)
	})
	cores := stack.CoresFrom(0, measureFrom)
	var k atomic.Int64
	_, missed := meter.Paced(ctx, env.Plan.LatencyRate, e2eSenders, env.Plan.Warmup+env.Plan.LatencyDuration, func(ctx context.Context) {
		at := time.Now()
		_, err := producers.Exec(ctx, `INSERT INTO bench_raw.queue (sent_at, payload) VALUES ($1, $2)`,
			at, payloads[k.Add(1)%int64(len(payloads))])
		if err != nil {
			errs.Note(err)
			return
		}
		if !at.Before(measureFrom) {
			sentMeasured.Add(1)
		}
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	busy := cores().String(runtime.NumCPU())
	meter.AwaitDelivered(&recvd, &sentMeasured, 3*time.Second)
	stopConsumers()
	wg.Wait()
	prog.Stop()
	endWindow()
	s := e2e.Summary()
	env.Sink.Add(result.Result{
		Key: key, System: result.Ceiling, Scenario: "e2e-latency",
		Label:   fmt.Sprintf("raw queue end to end at %d msg/s: durable INSERT, leasing UPDATE … SKIP LOCKED, DELETE as ack", env.Plan.LatencyRate),
		Payload: size, Batch: 1, Clients: e2eSenders, Unit: "ms", Value: s.P50, Latency: &s,
		Count: recvd.Load(), Seconds: env.Plan.LatencyDuration.Seconds(), Errors: errs.Count(), FirstError: errs.First(),
		Notes: fmt.Sprintf("%d consumers woken in process; delivered %s of %s sent in the window; %d sends skipped (all %d senders busy); %s",
			e2eConsumers, meter.Group(recvd.Load()), meter.Group(sentMeasured.Load()), missed, e2eSenders, busy),
	})
	return nil
}

// rawConsume is one consumer of E2ELatency: lease up to e2eBatch rows,
// note how long each took to arrive, delete them, again.
func rawConsume(ctx context.Context, pool *pgxpool.Pool, wake <-chan struct{}, measureFrom time.Time,
	e2e *meter.Recorder, recvd *atomic.Int64, errs *meter.Errors) {
	for ctx.Err() == nil {
		rows, err := pool.Query(ctx, `
			UPDATE bench_raw.queue SET lease_until = now() + interval '30 seconds'
			 WHERE id IN (SELECT id FROM bench_raw.queue WHERE lease_until IS NULL
			               ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
			RETURNING id, sent_at, payload`, e2eBatch)
		var ids []int64
		var sent []time.Time
		if err == nil {
			var id int64
			var at time.Time
			var body []byte
			for rows.Next() {
				if err = rows.Scan(&id, &at, &body); err != nil {
					break
				}
				ids, sent = append(ids, id), append(sent, at)
			}
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
		now := time.Now()
		if err != nil {
			if ctx.Err() == nil {
				errs.Note(err)
				meter.Sleep(ctx, 20*time.Millisecond)
			}
			continue
		}
		for _, at := range sent {
			if !at.Before(measureFrom) {
				e2e.Add(now.Sub(at))
				recvd.Add(1)
			}
		}
		if len(ids) == 0 {
			t := time.NewTimer(500 * time.Millisecond)
			select {
			case <-ctx.Done():
			case <-wake:
			case <-t.C:
			}
			t.Stop()
			continue
		}
		if _, err := pool.Exec(ctx, `DELETE FROM bench_raw.queue WHERE id = ANY($1)`, ids); err != nil && ctx.Err() == nil {
			errs.Note(err)
		}
	}
}
