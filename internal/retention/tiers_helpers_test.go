package retention

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// fullCycle runs one cycle with the tier check, due or not.
func (e *env) fullCycle() CycleResult {
	e.t.Helper()
	res, err := e.svc.RunFullCycle(e.ctx)
	if err != nil {
		e.t.Fatalf("RunFullCycle: %v", err)
	}
	if res.Skipped || !res.TierCheckRan {
		e.t.Fatalf("RunFullCycle skipped %v, tier check ran %v", res.Skipped, res.TierCheckRan)
	}
	if len(res.Failures) > 0 {
		e.t.Fatalf("RunFullCycle: failed steps: %v", res.Err())
	}
	return res
}

// leafExists reports whether a leaf of the lethe schema exists.
func (e *env) leafExists(name string) bool {
	e.t.Helper()
	return e.count(`SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'lethe' AND c.relname = $1`, name) == 1
}

// gaugeValue reads a gauge.
func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}
