package metrics_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// The loss gauge is the API's lossAt: present for a group with unread
// messages on a queue whose rules delete them, absent otherwise.
func TestPrometheusLossTimeMatchesTheAPI(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	s := testserver.Start(t, testserver.Options{Clock: clk, Config: dataDir(t)})

	call(t, "POST", s.URL+"/api/v1/configure", map[string]any{"queue": "lag",
		"options": map[string]any{"retentionEnabled": true, "retentionSeconds": 7200, "maxWaitTimeSeconds": 3600}}, http.StatusOK, nil)
	call(t, "POST", s.URL+"/api/v1/configure", map[string]any{"queue": "keep"}, http.StatusOK, nil)
	for _, q := range []string{"lag", "keep"} {
		call(t, "POST", s.URL+"/api/v1/push", api.PushRequest{Items: []api.PushItem{
			{Queue: q, Partition: "p0", Payload: json.RawMessage(`1`)}}}, http.StatusCreated, nil)
	}
	clk.Advance(10 * time.Minute)
	call(t, "POST", s.URL+"/api/v1/push", api.PushRequest{Items: []api.PushItem{
		{Queue: "lag", Partition: "p0", Payload: json.RawMessage(`2`)}}}, http.StatusCreated, nil)
	consume(t, s.URL, "one", "p0", 1) // one's oldest unread: offset 1, at t0+10m
	consume(t, s.URL, "all", "p0", 2) // nothing unread
	call(t, "GET", s.URL+"/api/v1/pop/queue/keep?consumerGroup=one&wait=false", nil, http.StatusOK, nil)

	prom := scrape(t, s.URL+"/metrics")
	series := `lethe_queue_group_loss_timestamp_seconds{group="one",queue="lag"}`
	want := float64(t0.Add(10*time.Minute + time.Hour).Unix())
	if got, ok := prom[series]; !ok || got != want {
		t.Errorf("%s = %v (present %v), want %v (maxWaitTimeSeconds after offset 1); have:\n%s", series, got, ok, want, lethe(prom))
	}
	for _, absent := range []string{`lethe_queue_group_loss_timestamp_seconds{group="all",queue="lag"}`,
		`lethe_queue_group_loss_timestamp_seconds{group="one",queue="keep"}`} {
		if v, ok := prom[absent]; ok {
			t.Errorf("%s = %v, want no series (nothing unread, or no rule deleting unread data)", absent, v)
		}
	}
	var groups []api.GroupSummary
	call(t, "GET", s.URL+"/api/v1/consumer-groups", nil, http.StatusOK, &groups)
	for _, g := range groups {
		if g.Name == "one" && g.QueueName == "lag" && (g.LossAt == nil || float64(g.LossAt.Unix()) != want) {
			t.Errorf("API lossAt of one on lag = %v, want the gauge's %v", g.LossAt, want)
		}
	}

	// The loss times are read at most once a minute: one consuming all it
	// had left shows in the lag at once, in the loss time at the next read.
	consume(t, s.URL, "one", "p0", 1)
	prom = scrape(t, s.URL+"/metrics")
	lag := `lethe_queue_lag_messages{group="one",queue="lag"}`
	if got, ok := prom[series]; !ok || got != want || prom[lag] != 0 {
		t.Errorf("within the minute: %s = %v (present %v), %s = %v; want the last loss time read (%v) and lag 0",
			series, got, ok, lag, prom[lag], want)
	}
	clk.Advance(time.Minute)
	prom = scrape(t, s.URL+"/metrics")
	if v, ok := prom[series]; ok {
		t.Errorf("a minute later %s = %v, want no series: one has nothing unread", series, v)
	}
}
