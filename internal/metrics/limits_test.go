package metrics_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/metrics"
	"github.com/lethe-mq/lethe/internal/testserver"
)

func TestQueueGaugesKeepTheDeepestQueues(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{Config: dataDir(t)})
	var items []api.PushItem
	for q, n := range map[string]int{"shallow": 1, "deepest": 3, "middle": 2} {
		for range n {
			items = append(items, api.PushItem{Queue: q, Payload: json.RawMessage(`{}`)})
		}
	}
	call(t, "POST", s.URL+"/api/v1/push", api.PushRequest{Items: items}, http.StatusCreated, nil)

	m := metrics.New(metrics.Config{Pool: s.Pool, MaxQueueSeries: 2})
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	depth := map[string]float64{}
	queues := -1.0
	for _, f := range fams {
		switch f.GetName() {
		case "lethe_queue_depth_messages":
			for _, mt := range f.GetMetric() {
				depth[mt.GetLabel()[0].GetValue()] = mt.GetGauge().GetValue()
			}
		case "lethe_queues":
			queues = f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	if want := map[string]float64{"deepest": 3, "middle": 2}; !maps.Equal(depth, want) {
		t.Errorf("depth gauges = %v, want only the two deepest %v", depth, want)
	}
	if queues != 3 {
		t.Errorf("lethe_queues = %v, want 3 (every queue, past the series limit too)", queues)
	}
}

func TestCounterQueueLabelsAreBounded(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Config{MaxQueueLabels: 2})
	h := m.Hooks()
	for _, q := range []string{"a", "b", "c", "d", "a"} {
		h.Pushed(q, 1)
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		if f.GetName() == "lethe_messages_pushed_total" {
			for _, mt := range f.GetMetric() {
				got[mt.GetLabel()[0].GetValue()] = mt.GetCounter().GetValue()
			}
		}
	}
	if want := map[string]float64{"a": 2, "b": 1, "__other__": 2}; !maps.Equal(got, want) {
		t.Fatalf("pushed by queue = %v, want %v", got, want)
	}
}
