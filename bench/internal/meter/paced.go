package meter

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Paced starts fn about rate times a second for d, on a pool of senders
// goroutines: an open-loop load that does not slow down when the server
// does. It returns how many calls started and how many were skipped
// because every sender was still busy (the offered load was not met). It
// returns once every started call has finished.
func Paced(ctx context.Context, rate, senders int, d time.Duration, fn func(ctx context.Context)) (started, missed int64) {
	jobs := make(chan struct{}, senders)
	var wg sync.WaitGroup
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				fn(ctx)
			}
		}()
	}
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	end := start.Add(d)
	next := start
	for ctx.Err() == nil {
		now := time.Now()
		if !now.Before(end) {
			break
		}
		for !next.After(now) {
			select {
			case jobs <- struct{}{}:
				started++
			default:
				missed++
			}
			next = next.Add(interval)
		}
		Sleep(ctx, time.Until(next))
	}
	close(jobs)
	wg.Wait()
	return started, missed
}

// AwaitDelivered gives messages still in flight after a paced run up to
// limit to arrive (until delivered catches up with sent), so the slowest
// are counted rather than dropped from a latency's tail.
func AwaitDelivered(delivered, sent *atomic.Int64, limit time.Duration) {
	for deadline := time.Now().Add(limit); delivered.Load() < sent.Load() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
}
