package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/inspect"
	"github.com/lethe-mq/lethe/internal/retention"
)

// The retention routes answer from the audit rows and the dry run, with
// one time-range parser and 400/404 for bad input.
func TestRetentionRoutes(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	r.call("POST", "/api/v1/configure", `{"queue":"q","options":{"retentionEnabled":true,"retentionSeconds":600,"maxWaitTimeSeconds":30}}`, http.StatusOK, nil)
	r.push(api.PushItem{Queue: "q", Partition: "p", Payload: json.RawMessage(`1`)},
		api.PushItem{Queue: "q", Partition: "p", Payload: json.RawMessage(`2`)},
		api.PushItem{Queue: "q", Partition: "p", Payload: json.RawMessage(`3`)})
	if got := r.pop("/api/v1/pop/queue/q/partition/p?consumerGroup=g&batch=3"); len(got.Messages) != 3 {
		t.Fatalf("popped %d messages, want 3", len(got.Messages))
	}
	r.clock.Advance(2 * time.Minute)
	if _, err := r.srv.Retention.RunCycle(context.Background()); err != nil {
		t.Fatal(err)
	}

	var series inspect.RetentionSeries
	r.call("GET", "/api/v1/analytics/retention?queue=q", "", http.StatusOK, &series)
	if series.BucketMinutes != 15 || len(series.Series) != 1 || series.Totals.EvictionMsgs != 3 ||
		series.Totals.TotalMsgs != 3 || series.Totals.EventCount != 1 {
		t.Fatalf("analytics = %+v", series)
	}
	var hist struct{ Entries []inspect.HistoryEntry }
	r.call("GET", "/api/v1/retention/history?queue=q&lostOnly=true", "", http.StatusOK, &hist)
	if len(hist.Entries) != 1 || hist.Entries[0].Lost[0].Group != "g" || hist.Entries[0].Lost[0].Leased != 3 {
		t.Fatalf("history = %+v, want g's loss of 3 leased messages", hist.Entries)
	}
	day := coreT0.Format(time.DateOnly) // from=to=that day: the whole day
	r.call("GET", "/api/v1/retention/history?queue=q&from="+day+"&to="+day, "", http.StatusOK, &hist)
	if len(hist.Entries) != 1 {
		t.Fatalf("history of %s = %d entries, want 1", day, len(hist.Entries))
	}
	var stats api.PostgresStats
	r.call("GET", "/api/v1/analytics/postgres-stats", "", http.StatusOK, &stats)
	if len(stats.Tables) == 0 {
		t.Fatal("postgres-stats lists no tables")
	}
	var st retention.Status
	r.call("GET", "/api/v1/retention/status?queue=q", "", http.StatusOK, &st)
	if len(st.Queues) != 1 || st.Queues[0].Rules.RetentionSeconds != 600 {
		t.Fatalf("status = %+v", st)
	}
	for path, status := range map[string]int{
		"/api/v1/retention/status?queue=nope":                       http.StatusNotFound,
		"/api/v1/retention/status?queue=%ff":                        http.StatusBadRequest,
		"/api/v1/retention/history?queue=a%00b":                     http.StatusBadRequest,
		"/api/v1/analytics/retention?from=yesterday":                http.StatusBadRequest,
		"/api/v1/analytics/retention?from=2030-01-03&to=2030-01-02": http.StatusBadRequest,
		"/api/v1/analytics/retention?from=2020-01-01&to=2030-01-02": http.StatusBadRequest,
		"/api/v1/retention/history?limit=0":                         http.StatusBadRequest,
		"/api/v1/retention/history?rule=ttl":                        http.StatusBadRequest,
		"/api/v1/retention/history?since=-1h":                       http.StatusBadRequest,
	} {
		requireCoreError(t, path, r.do("GET", path, ""), status)
	}
}
