package retention

import (
	"sync"
	"testing"
	"time"
)

// restLog records the duty cycle's rests instead of taking them.
type restLog struct {
	mu    sync.Mutex
	steps int
	work  []time.Duration
	rests []time.Duration
}

func (l *restLog) hook(worked, rest time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.work = append(l.work, worked)
	l.rests = append(l.rests, rest)
}

func (l *restLog) step(string, int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps++
	return nil
}

func TestTheLoopRestsBetweenStepsByItsDutyCycle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		maxBusy float64
		factor  float64 // rest per unit of work
	}{{0.25, 3}, {0.5, 1}, {1, 0}} {
		log := &restLog{}
		e := setup(t, func(c *Config) {
			c.MaxBusy, c.BatchSize = tc.maxBusy, 2
			c.TestSignals.Rest, c.TestSignals.Step = log.hook, log.step
		})
		e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 60})
		for range 5 {
			e.pushSegment("q", "p", 1)
		}
		e.clock.Advance(2 * time.Minute)
		if res := e.cycle(); res.Retention.Segments != 5 {
			t.Fatalf("max busy %v: deleted %+v, want 5 segments", tc.maxBusy, res.Retention)
		}
		if tc.maxBusy == 1 {
			if len(log.rests) != 0 {
				t.Fatalf("max busy 1 rested %d times; want never", len(log.rests))
			}
			continue
		}
		// Every step rests, the work list's included.
		if len(log.rests) != log.steps || log.steps < 4 {
			t.Fatalf("max busy %v: %d rests for %d steps", tc.maxBusy, len(log.rests), log.steps)
		}
		for i, w := range log.work {
			want := time.Duration(float64(w) * tc.factor)
			if w <= 0 || log.rests[i] < want-time.Microsecond || log.rests[i] > want+time.Microsecond {
				t.Fatalf("max busy %v: after %v of work rested %v, want %v", tc.maxBusy, w, log.rests[i], want)
			}
		}
	}
}

func TestTheWorkListHoldsOnlyPartitionsWithWork(t *testing.T) {
	t.Parallel()
	steps := map[string]int{}
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 3600})
	e.pushSegment("q", "old", 1)
	e.clock.Advance(50 * time.Minute)
	for _, p := range []string{"young", "other"} {
		e.pushSegment("q", p, 1)
	}
	e.clock.Advance(11 * time.Minute) // "old" is past its window; the others are not

	e.svc.cfg.TestSignals.Step = func(phase string, n int) error { steps[phase]++; return nil }
	res := e.cycle()
	if res.Partitions != 3 || res.PartitionsDue != 1 || res.Retention.Segments != 1 {
		t.Fatalf("work list covered %d partitions, %d due, deleted %+v; want 3, 1, the old segment",
			res.Partitions, res.PartitionsDue, res.Retention)
	}
	if steps[PhaseRetention] != 1 || steps[PhaseEviction] != 0 {
		t.Fatalf("steps by phase %v; want one retention step, of old only", steps)
	}
	work, err := loadWork(e.ctx, e.pool, e.clock.Now(), "", heads{})
	if err != nil || len(work) != 1 || len(work[0].Due) != 0 || work[0].Partitions != 3 {
		t.Fatalf("work list after the sweep: %+v, %v; want one queue of 3 partitions, none due", work, err)
	}
}
