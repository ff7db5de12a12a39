package retention_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// TestReplicaRunsTheLoopAndServesItsRoutesAndMetrics checks the wiring in
// internal/app: the loop starts with the replica, its routes are mounted and
// its metrics are on the replica's registry.
func TestReplicaRunsTheLoopAndServesItsRoutesAndMetrics(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	srv := testserver.Start(t, testserver.Options{Clock: clk, Config: func(c *config.Server) {
		c.Retention.Enabled = true
		c.Retention.Interval = 10 * time.Millisecond
	}})
	post(t, srv.URL+"/api/v1/configure", `{"queue":"q","options":{"retentionEnabled":true,"retentionSeconds":60}}`)
	post(t, srv.URL+"/api/v1/push", `{"items":[{"queue":"q","payload":1},{"queue":"q","payload":2}]}`)
	clk.Advance(2 * time.Minute)

	deadline := time.Now().Add(20 * time.Second)
	for {
		body := fetch(t, srv.URL+"/metrics/prometheus")
		if strings.Contains(body, `lethe_retention_deleted_frames_total{rule="retention"} 2`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica's loop did not delete the 2 expired messages; metrics:\n%s", grepLines(body, "lethe_retention"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	var st struct {
		Queues []struct {
			Queue    string `json:"queue"`
			Segments int64  `json:"segments"`
		} `json:"queues"`
	}
	if err := json.Unmarshal([]byte(fetch(t, srv.URL+"/api/v1/retention/status")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Queues) != 1 || st.Queues[0].Segments != 0 {
		t.Fatalf("status after the sweep: %+v", st)
	}
	if !strings.Contains(fetch(t, srv.URL+"/api/v1/analytics/postgres-stats"), `"lethe.segments"`) {
		t.Fatal("postgres-stats is not mounted")
	}
}

func post(t *testing.T, url, body string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s = %d %s", url, resp.StatusCode, b)
	}
}

func fetch(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
