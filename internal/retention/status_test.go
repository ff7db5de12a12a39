package retention

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestStatusIsADryRunOfTheNextCycle(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 3600,
		"completedRetentionSeconds": 60, "maxWaitTimeSeconds": 1800})
	e.pushSegment("q", "p", 4) // t0: consumed below
	e.pushSegment("q", "p", 4) // t0: half consumed
	e.consume("q", "p", "g", 6)
	e.clock.Advance(20 * time.Minute)
	e.pushSegment("q", "p", 3) // t0+20m: unread
	e.clock.Advance(20 * time.Minute)
	e.pushSegment("q", "p", 2) // t0+40m: young
	e.pushSegment("q", "other", 1)
	e.clock.Advance(15 * time.Minute) // now t0+55m

	st, err := e.svc.Status(e.ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Queues) != 1 {
		t.Fatalf("status has %d queues, want 1", len(st.Queues))
	}
	q := st.Queues[0]
	if q.Partitions != 2 || q.Segments != 5 || q.Messages != 14 || q.Bytes == 0 {
		t.Fatalf("footprint = %d partitions, %d segments, %d messages, %d bytes; want 2, 5, 14, >0",
			q.Partitions, q.Segments, q.Messages, q.Bytes)
	}
	if q.Cutoffs.Retention == nil || !q.Cutoffs.Retention.Equal(e.clock.Now().Add(-time.Hour)) || q.Cutoffs.MaxWait == nil {
		t.Fatalf("cutoffs = %+v", q.Cutoffs)
	}
	if q.OldestMessageAt == nil || !q.OldestMessageAt.Equal(t0) || q.OldestAgeSeconds != 55*60 {
		t.Fatalf("oldest = %v (%v s), want t0 (3300 s)", q.OldestMessageAt, q.OldestAgeSeconds)
	}
	// Completed retention takes segment 0, stops at the half-consumed one;
	// eviction then takes it and the unread one (older than 30 min).
	want := Plan{CompletedRetention: Amount{1, 4, 0}, MaxWait: Amount{2, 7, 0}}
	if q.NextCycle.CompletedRetention.Segments != want.CompletedRetention.Segments ||
		q.NextCycle.CompletedRetention.Frames != want.CompletedRetention.Frames ||
		q.NextCycle.MaxWait.Segments != want.MaxWait.Segments || q.NextCycle.MaxWait.Frames != want.MaxWait.Frames ||
		q.NextCycle.Retention.Segments != 0 {
		t.Fatalf("plan = %+v, want %+v (bytes aside)", q.NextCycle, want)
	}
	if n := e.count(`SELECT count(*) FROM lethe.segments`); n != 5 {
		t.Fatalf("the dry run deleted something: %d segments left", n)
	}

	res := e.cycle()
	if res.CompletedRetention != q.NextCycle.CompletedRetention || res.MaxWait != q.NextCycle.MaxWait ||
		res.Retention != q.NextCycle.Retention {
		t.Fatalf("the cycle did %+v / %+v / %+v; the plan said %+v", res.Retention, res.CompletedRetention, res.MaxWait, q.NextCycle)
	}
	if _, err := e.svc.Status(e.ctx, "nope"); err == nil {
		t.Fatal("status of an unknown queue did not fail")
	}
}

func TestHTTPEndpoints(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 600, "maxWaitTimeSeconds": 30})
	e.pushSegment("q", "p", 3)
	e.pop("q", "p", "g", 3)
	e.clock.Advance(2 * time.Minute)
	e.cycle()
	mux := http.NewServeMux()
	e.svc.Routes(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	var series RetentionSeries
	get(t, srv.URL+"/api/v1/analytics/retention?queue=q", http.StatusOK, &series)
	if series.BucketMinutes != 15 || len(series.Series) != 1 || series.Totals.EvictionMsgs != 3 ||
		series.Totals.TotalMsgs != 3 || series.Totals.EventCount != 1 {
		t.Fatalf("analytics = %+v", series)
	}
	var raw map[string]any
	get(t, srv.URL+"/api/v1/analytics/retention", http.StatusOK, &raw)
	for _, k := range []string{"timeRange", "bucketMinutes", "series", "totals"} {
		if _, ok := raw[k]; !ok {
			t.Fatalf("analytics answer lacks %q: %v", k, raw)
		}
	}
	bucket := raw["series"].([]any)[0].(map[string]any)
	for _, k := range []string{"bucket", "retentionMsgs", "completedRetentionMsgs", "evictionMsgs", "totalMsgs", "eventCount"} {
		if _, ok := bucket[k]; !ok {
			t.Fatalf("series bucket lacks %q: %v", k, bucket)
		}
	}

	var hist struct{ Entries []HistoryEntry }
	get(t, srv.URL+"/api/v1/retention/history?queue=q&lostOnly=true", http.StatusOK, &hist)
	if len(hist.Entries) != 1 || hist.Entries[0].Lost[0].Group != "g" || hist.Entries[0].Lost[0].Leased != 3 {
		t.Fatalf("history = %+v, want g's loss of 3 leased messages", hist.Entries)
	}

	var stats PostgresStats
	get(t, srv.URL+"/api/v1/analytics/postgres-stats", http.StatusOK, &stats)
	tables := map[string]bool{}
	for _, tb := range stats.Tables {
		tables[tb.Table] = true
	}
	for _, name := range []string{"lethe.segments", "lethe.txns", "lethe.partitions", "lethe.cursors", "lethe.dead_letters",
		"lethe.subscriptions", "lethe.queues", "lethe.settings", "lethe.retention_history", "lethe.retention_runs"} {
		if !tables[name] {
			t.Fatalf("postgres-stats lacks %s: %v", name, tables)
		}
	}
	if stats.Tables[0].TotalBytes < stats.Tables[len(stats.Tables)-1].TotalBytes {
		t.Fatal("tables are not sorted largest first")
	}

	var st Status
	get(t, srv.URL+"/api/v1/retention/status?queue=q", http.StatusOK, &st)
	if len(st.Queues) != 1 || st.Queues[0].Rules.RetentionSeconds != 600 {
		t.Fatalf("status = %+v", st)
	}
	for url, status := range map[string]int{
		"/api/v1/retention/status?queue=nope":                       http.StatusNotFound,
		"/api/v1/analytics/retention?from=yesterday":                http.StatusBadRequest,
		"/api/v1/analytics/retention?from=2030-01-03&to=2030-01-02": http.StatusBadRequest,
		"/api/v1/retention/history?limit=0":                         http.StatusBadRequest,
		"/api/v1/retention/history?rule=ttl":                        http.StatusBadRequest,
	} {
		var body map[string]string
		get(t, srv.URL+url, status, &body)
		if body["error"] == "" {
			t.Fatalf("%s: no error message", url)
		}
	}
}

func get(t *testing.T, url string, wantStatus int, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantStatus {
		t.Fatalf("GET %s = %d %s, want %d", url, resp.StatusCode, body, wantStatus)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET %s: content type %q", url, resp.Header.Get("Content-Type"))
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("GET %s: %v in %s", url, err, body)
	}
}

func TestWindowLagCountsCompletedRetentionOnlyForConsumedHeads(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("timed", map[string]any{"retentionEnabled": true, "retentionSeconds": 3600})
	e.configure("done", map[string]any{"retentionEnabled": true, "completedRetentionSeconds": 60})
	e.configure("unread", map[string]any{"retentionEnabled": true, "completedRetentionSeconds": 60})
	for _, q := range []string{"timed", "done", "unread"} {
		e.pushSegment(q, "p", 2)
	}
	e.consume("done", "p", "g", 2)
	e.pop("unread", "p", "g", 1) // leased, not acked: nothing consumed
	e.clock.Advance(2 * time.Hour)

	st, err := e.svc.Status(e.ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"timed": 3600, "done": 7140, "unread": 0}
	for _, q := range st.Queues {
		if q.WindowLagSeconds != want[q.Queue] || q.OldestAgeSeconds != 7200 {
			t.Errorf("%s: lag %v s, oldest %v s; want lag %v, oldest 7200", q.Queue, q.WindowLagSeconds, q.OldestAgeSeconds, want[q.Queue])
		}
	}
	e.cycle() // the gauges are the work list's, before the cycle deletes
	for q, lag := range want {
		if v := gather(t, e.svc, "lethe_retention_window_lag_seconds", map[string]string{"queue": q}); v != lag {
			t.Errorf("gauge for %s = %v, want %v", q, v, lag)
		}
	}
}
