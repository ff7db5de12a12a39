// Package plan holds how long and how big every scenario is: the full
// profile the lead runs on a quiet machine, and the quick profile CI and
// the smoke test run to see that every scenario works.
package plan

import "time"

// Plan bounds every scenario. Each one stops by itself.
type Plan struct {
	Quick bool
	Sizes []int // payload sizes in bytes

	Warmup   time.Duration // before each throughput window, not counted
	Duration time.Duration // each throughput window

	PushPartitions []int // partition counts of the push matrix

	ConsumeBacklog    int // messages written for pop+ack and fan-out
	ConsumePartitions int // partitions they are spread over
	// WidePartitions is the partitions of the wide pop+ack backlog (20
	// messages each): a pop's candidate listing reads every one of them.
	WidePartitions int
	DrainLimit     time.Duration // bound on each drain (pop+ack, fan-out, workers)

	LatencyRate     int // offered load of the end-to-end latency run, msg/s
	LatencyDuration time.Duration

	SweepBacklog       int // frames swept, at least 5 million in the full run
	SweepSegmentFrames int // frames per segment row of that backlog
	SweepPartitions    int
	SweepLoadRate      int           // pushes (msg/s) measured without and during the sweep
	SweepBaseline      time.Duration // push latency without the sweep
	SweepLimit         time.Duration // bound on the sweep itself

	PeerRetentionLimit time.Duration // bound on River's cleaner and NATS MaxAge expiry

	TierDropBytes  int64 // frame bytes in the partition the tier-drop scenario drops (1 GiB in the full run)
	HeldMoveFrames int   // pending frames the held-move scenario moves
}

// Full is the measurement profile: about 25 minutes for everything on a
// 2-core machine.
func Full() Plan {
	return Plan{
		Sizes:              []int{100, 1024},
		Warmup:             1500 * time.Millisecond,
		Duration:           10 * time.Second,
		PushPartitions:     []int{1, 100, 10_000},
		ConsumeBacklog:     500_000,
		ConsumePartitions:  100,
		WidePartitions:     10_000,
		DrainLimit:         12 * time.Second,
		LatencyRate:        1000,
		LatencyDuration:    10 * time.Second,
		SweepBacklog:       5_000_000,
		SweepSegmentFrames: 1000,
		SweepPartitions:    8,
		SweepLoadRate:      2000,
		SweepBaseline:      8 * time.Second,
		SweepLimit:         60 * time.Second,
		TierDropBytes:      1 << 30,
		HeldMoveFrames:     300_000,
		PeerRetentionLimit: 30 * time.Second,
	}
}

// Quick is the smoke profile: every scenario runs, briefly, on small
// backlogs and at most 1,000 partitions. Its figures are not measurements.
func Quick() Plan {
	return Plan{
		Quick:              true,
		Sizes:              []int{100, 1024},
		Warmup:             200 * time.Millisecond,
		Duration:           time.Second,
		PushPartitions:     []int{1, 100, 1000},
		ConsumeBacklog:     5000,
		ConsumePartitions:  100,
		WidePartitions:     1000,
		DrainLimit:         2 * time.Second,
		LatencyRate:        200,
		LatencyDuration:    time.Second,
		SweepBacklog:       100_000,
		SweepSegmentFrames: 1000,
		SweepPartitions:    8,
		SweepLoadRate:      500,
		SweepBaseline:      time.Second,
		SweepLimit:         10 * time.Second,
		TierDropBytes:      8 << 20,
		HeldMoveFrames:     5_000,
		PeerRetentionLimit: 10 * time.Second,
	}
}
