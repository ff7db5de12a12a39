package retention

import (
	"testing"
	"time"
)

func TestMetricsRetentionNeverAndHugeValuesPurgeNothingRecent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	insert := func(at time.Time) {
		t.Helper()
		if _, err := e.pool.Exec(e.ctx, `
			INSERT INTO lethe.retention_history (executed_at, queue_name, partition_name, partition_id, rule, segments, frames, bytes, lost)
			VALUES ($1, 'q', 'p', gen_random_uuid(), 'retention', 1, 1, 1,
			        '[{"group": "g", "messages": 1, "fromOffset": 0, "toOffset": 0, "leased": 0}]')`, at); err != nil {
			t.Fatal(err)
		}
	}
	insert(t0)
	e.clock.Advance(400 * day)
	insert(e.clock.Now().Add(-time.Hour))

	for _, days := range []int{Never, 999_999, 1 << 62} {
		svc := e.newService(e.pool, func(c *Config) { c.MetricsRetentionDays = days })
		res, err := svc.RunCycle(e.ctx)
		if err != nil || res.MetricsPurged != 0 {
			t.Fatalf("METRICS_RETENTION_DAYS %d: purged %d rows (%v); want none", days, res.MetricsPurged, err)
		}
	}
	if res := e.cycle(); res.MetricsPurged != 2 {
		t.Fatalf("the default 90 days purged %d rows, want the 400-day-old one and its loss row", res.MetricsPurged)
	}
	if n := e.count(`SELECT count(*) FROM lethe.retention_losses`); n != 1 {
		t.Fatalf("%d loss rows left, want the recent one", n)
	}
}

func TestDaysBeforeIsCalendarArithmetic(t *testing.T) {
	now := time.Date(2030, 3, 31, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		days int
		want time.Time
		ok   bool
	}{
		{1, time.Date(2030, 3, 30, 12, 0, 0, 0, time.UTC), true},
		{90, time.Date(2030, 1, 0, 12, 0, 0, 0, time.UTC), true},
		{36500, now.AddDate(0, 0, -36500), true},
		{999_999, time.Time{}, false}, // before year 1: nothing stored is that old
		{Never, time.Time{}, false},
		{0, time.Time{}, false},
		{1 << 62, time.Time{}, false},
	} {
		got, ok := daysBefore(now, tc.days)
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("daysBefore(%d) = %v, %v; want %v, %v", tc.days, got, ok, tc.want, tc.ok)
		}
		if ok && !got.Before(now) {
			t.Errorf("daysBefore(%d) = %v is not before now", tc.days, got)
		}
	}
}
