package ceiling

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/bench/internal/meter"
)

// The load the raw drop and move run under: what lethe's tier scenarios
// push (lethebench's tierLoadRate), as segment rows of tierLoadBatch
// frames, one autocommitted INSERT each, from as many senders as lethe's
// load has.
const (
	tierLoadRate    = 2000
	tierLoadBatch   = 10
	tierLoadSenders = 32
)

// insertLoad is that load running, each INSERT's latency stamped with its
// start.
type insertLoad struct {
	began  time.Time
	rec    meter.Stamped
	stop   context.CancelFunc
	done   chan struct{}
	errs   meter.Errors
	missed int64
}

// startInsertLoad creates bench_raw.tier_load and starts the load on it.
func startInsertLoad(ctx context.Context, pool *pgxpool.Pool, size int) (*insertLoad, error) {
	if err := createLeaf(ctx, pool, "tier_load"); err != nil {
		return nil, err
	}
	blob := segmentBlobs(uint64(size)+7, 1, tierLoadBatch, size)[0]
	pids := [8]uuid.UUID{}
	for i := range pids {
		pids[i] = uuid.New()
	}
	l := &insertLoad{began: time.Now(), done: make(chan struct{})}
	loadCtx, stop := context.WithCancel(ctx)
	l.stop = stop
	var seq atomic.Int64
	go func() {
		defer close(l.done)
		_, l.missed = meter.Paced(loadCtx, tierLoadRate/tierLoadBatch, tierLoadSenders, 24*time.Hour, func(ctx context.Context) {
			k := seq.Add(1)
			at := time.Now()
			_, err := pool.Exec(ctx, `INSERT INTO bench_raw.tier_load VALUES ($1, $2, $3, $4, $5, $5, $6, $7, '1w', $5)`,
				pids[k%int64(len(pids))], k*tierLoadBatch, k*tierLoadBatch+tierLoadBatch-1, tierLoadBatch, at, len(blob), blob)
			switch {
			case err == nil:
				l.rec.Add(at, time.Since(at))
			case ctx.Err() == nil:
				l.errs.Note(err)
			}
		})
	}()
	return l, nil
}

// finish stops the load and waits for the INSERTs in flight.
func (l *insertLoad) finish() {
	l.stop()
	<-l.done
}

// note says what the load did beside its latencies.
func (l *insertLoad) note() string {
	s := fmt.Sprintf("%d msg/s offered as INSERTs of %d-frame rows", tierLoadRate, tierLoadBatch)
	if l.missed > 0 {
		s += fmt.Sprintf(", %d sends skipped (every sender busy)", l.missed)
	}
	if n := l.errs.Count(); n > 0 {
		s += fmt.Sprintf(", %d failed: %s", n, l.errs.First())
	}
	return s
}
