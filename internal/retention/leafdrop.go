package retention

import (
	"context"
	"time"
)

// LeafDrop is what dropping one leaf (a time partition of the segments,
// the held area or the hash sidecar) cost: the bytes its files held just
// before DROP TABLE (pg_total_relation_size: heap, TOAST and indexes) and
// the work time of each part, rests of the duty cycle excluded. Started
// and Ended are wall-clock readings (not the injected clock: they time
// the work, they decide nothing), from the first step's start to the end
// of DROP TABLE, rests between the parts included.
type LeafDrop struct {
	Leaf    string
	Tier    string
	Bytes   int64
	Started time.Time
	Ended   time.Time
	// Detach is DETACH PARTITION ... CONCURRENTLY (or FINALIZE); Audit the
	// per-partition audit rows, watermark moves and dead-letter purges of
	// a segment leaf, or the count of a sidecar leaf's hashes; Drop the
	// size reading, DROP TABLE and the leaf's record.
	Detach time.Duration
	Audit  time.Duration
	Drop   time.Duration
}

// Work is the drop's own time: its three parts, without the rests.
func (d LeafDrop) Work() time.Duration { return d.Detach + d.Audit + d.Drop }

// timed wraps a step function so that the time it works (not the rest
// step takes after it) is added to *into.
func timed(into *time.Duration, fn func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		began := time.Now()
		err := fn(ctx)
		*into += time.Since(began)
		return err
	}
}

// leafDropped counts a dropped leaf in the cycle's result and the metrics
// and logs what it cost.
func (s *Service) leafDropped(res *CycleResult, d LeafDrop) {
	res.LeavesDropped++
	res.LeafDrops = append(res.LeafDrops, d)
	s.metrics.leavesDropped.WithLabelValues(d.Tier).Inc()
	s.cfg.Logger.Info("retention leaf dropped", "leaf", d.Leaf, "tier", d.Tier, "bytes", d.Bytes,
		"detach_ms", millis(d.Detach), "audit_ms", millis(d.Audit), "drop_ms", millis(d.Drop))
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
