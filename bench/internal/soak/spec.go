// Package soak runs a steady mixed load against lethe for a long time and
// samples its footprint every interval: the size of every lethe table
// (heap, TOAST and indexes apart, partitions summed and listed), dead
// tuples, HOT updates, WAL on disk and written, the database's size,
// lethe's resident memory, push and end-to-end latency. It checks that
// every pushed message reached every consumer group exactly once, and
// judges whether the footprint stayed flat.
package soak

import (
	"errors"
	"fmt"
	"time"
)

// QueueLoad is one queue of the load and its rule.
type QueueLoad struct {
	Name       string
	Rate       int // messages per second
	Partitions int
	// CompletedRetention and Retention are the queue's
	// completedRetentionSeconds and retentionSeconds (0: off).
	CompletedRetention time.Duration
	Retention          time.Duration
}

// Spec is the whole soak.
type Spec struct {
	Duration time.Duration // of the load; the drain and the last sample follow
	Interval time.Duration // between samples
	Size     int           // payload bytes, incompressible
	Batch    int           // messages per push request
	Groups   int           // consumer groups, each reading every queue
	// Consumers is the long-polling consumers per group and queue.
	Consumers int
	Queues    []QueueLoad
	// TimeScale is how many times faster than the wall clock lethe's
	// clock runs (1 unless a test compresses the windows); rules are in
	// lethe's time, rates and durations in wall time.
	TimeScale float64
	// Tag keeps the queue names of different runs apart.
	Tag string
}

// Default is the soak's steady mixed load: 500 msg/s of 1 KiB over 50
// partitions with completed retention at 60 s, 100 msg/s over 10
// partitions with retention at 120 s, two consumer groups, a sample a minute.
func Default(d time.Duration) Spec {
	return Spec{
		Duration: d, Interval: time.Minute, Size: 1024, Batch: 10, Groups: 2, Consumers: 4, TimeScale: 1,
		Queues: []QueueLoad{
			{Name: "soak-completed", Rate: 500, Partitions: 50, CompletedRetention: 60 * time.Second},
			{Name: "soak-retention", Rate: 100, Partitions: 10, Retention: 120 * time.Second},
		},
	}
}

// Validate refuses a soak that cannot run as asked.
func (s *Spec) Validate() error {
	switch {
	case s.Duration < time.Minute:
		return fmt.Errorf("-soak %s: a soak needs at least a minute", s.Duration)
	case s.Interval < time.Second || s.Interval > s.Duration/3:
		return fmt.Errorf("-soak-interval %s: between 1s and a third of the soak (%s)", s.Interval, s.Duration/3)
	case s.Size < 64 || s.Size > 1<<20:
		return fmt.Errorf("-soak-size %d: between 64 B and 1 MiB", s.Size)
	case s.Batch < 1 || s.Batch > 1000:
		return fmt.Errorf("-soak-batch %d: between 1 and 1000", s.Batch)
	case s.Groups < 1 || s.Groups > 16:
		return fmt.Errorf("-soak-groups %d: between 1 and 16", s.Groups)
	case s.Consumers < 1 || s.Consumers > 64:
		return fmt.Errorf("-soak-consumers %d: between 1 and 64", s.Consumers)
	case s.TimeScale < 1:
		return errors.New("soak: the time scale must be at least 1")
	}
	if len(s.Queues) == 0 {
		return errors.New("soak: no queue to load")
	}
	for _, q := range s.Queues {
		if q.Rate < 0 || q.Partitions < 1 {
			return fmt.Errorf("soak queue %s: rate %d msg/s over %d partitions: the rate must be at least 0 and the partitions at least 1",
				q.Name, q.Rate, q.Partitions)
		}
		for _, w := range []time.Duration{q.CompletedRetention, q.Retention} {
			if w < 0 || w%time.Second != 0 {
				return fmt.Errorf("soak queue %s: a retention window of %s: lethe takes whole seconds", q.Name, w)
			}
		}
	}
	return nil
}

// options is the queue's configuration as lethe's configure takes it.
func (q QueueLoad) options() map[string]any {
	o := map[string]any{"retentionEnabled": q.CompletedRetention > 0 || q.Retention > 0}
	if q.CompletedRetention > 0 {
		o["completedRetentionSeconds"] = int(q.CompletedRetention / time.Second)
	}
	if q.Retention > 0 {
		o["retentionSeconds"] = int(q.Retention / time.Second)
	}
	return o
}

// queueName is the queue's name in this run.
func (s *Spec) queueName(q QueueLoad) string {
	if s.Tag == "" {
		return q.Name
	}
	return q.Name + "-" + s.Tag
}
