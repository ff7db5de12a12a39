package metrics_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/testserver"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestScrapeCountsTrafficAndReadsLag(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{Config: dataDir(t)})

	var items []api.PushItem
	for i := range 5 {
		items = append(items, api.PushItem{Queue: "mq", Payload: json.RawMessage(strconv.Itoa(i))})
	}
	call(t, "POST", s.URL+"/api/v1/push", api.PushRequest{Items: items}, http.StatusCreated, nil)

	// Offsets 0 and 1 completed, 2 to the dead letters, 3 failed (retried):
	// the group is done with 0..2 and lags 4-2 = 2 behind the head.
	first := pop(t, s.URL, 2)
	ack(t, s.URL, first.Messages[0], "completed")
	ack(t, s.URL, first.Messages[1], "completed")
	ack(t, s.URL, pop(t, s.URL, 1).Messages[0], "dlq")
	ack(t, s.URL, pop(t, s.URL, 1).Messages[0], "failed")
	call(t, "GET", s.URL+"/no/such/route", nil, http.StatusNotFound, nil)

	for _, path := range []string{"/metrics/prometheus", "/metrics"} {
		body := scrape(t, s.URL+path)
		want := map[string]float64{
			`lethe_messages_pushed_total{queue="mq"}`:                                         5,
			`lethe_messages_delivered_total{group="g",queue="mq"}`:                            4,
			`lethe_acks_total{group="g",queue="mq",status="completed"}`:                       2,
			`lethe_acks_total{group="g",queue="mq",status="dlq"}`:                             1,
			`lethe_acks_total{group="g",queue="mq",status="failed"}`:                          1,
			`lethe_queue_lag_messages{group="g",queue="mq"}`:                                  2,
			`lethe_queue_depth_messages{queue="mq"}`:                                          5,
			`lethe_partitions{queue="mq"}`:                                                    1,
			`lethe_dead_letters{queue="mq"}`:                                                  1,
			`lethe_queues`:                                                                    1,
			`lethe_metrics_database_up`:                                                       1,
			`lethe_maintenance_push_enabled`:                                                  0,
			`lethe_http_request_duration_seconds_count{code="201",route="POST /api/v1/push"}`: 1,
			`lethe_http_request_duration_seconds_count{code="404",route="unmatched"}`:         1,
			`lethe_long_polls_waiting`:                                                        0,
			`lethe_http_body_bytes_in_flight`:                                                 0,
			`lethe_commit_group_partitions_count`:                                             1,
			`lethe_commit_group_partitions_sum`:                                               1,
		}
		for series, v := range want {
			got, ok := body[series]
			if !ok {
				t.Errorf("GET %s: no series %s; have:\n%s", path, series, lethe(body))
				continue
			}
			if got != v {
				t.Errorf("GET %s: %s = %v, want %v", path, series, got, v)
			}
		}
		if got := body[`lethe_http_request_duration_seconds_count{code="200",route="POST /api/v1/ack"}`]; got != 4 {
			t.Errorf("GET %s: acks timed = %v, want 4", path, got)
		}
	}
}

func TestScrapeNeedsNoToken(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{Config: dataDir(t, func(c *config.Server) { c.AuthToken = "secret" })})
	scrape(t, s.URL+"/metrics/prometheus")
	resp, err := http.Get(s.URL + "/api/v1/resources/queues")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET queues without a token = %d, want 401", resp.StatusCode)
	}
	body := scrape(t, s.URL+"/metrics")
	if got := body[`lethe_http_request_duration_seconds_count{code="401",route="GET /api/v1/resources/queues"}`]; got != 1 {
		t.Fatalf("refused request timed %v times under its route, want 1; have:\n%s", got, lethe(body))
	}
}

// dataDir keeps the replica's files in the test's own directory, then
// applies more settings.
func dataDir(t *testing.T, more ...func(*config.Server)) func(*config.Server) {
	dir := t.TempDir()
	return func(c *config.Server) {
		c.DataDir = dir
		for _, f := range more {
			f(c)
		}
	}
}

func pop(t *testing.T, url string, batch int) api.PopResponse {
	t.Helper()
	var resp api.PopResponse
	call(t, "GET", fmt.Sprintf("%s/api/v1/pop/queue/mq?consumerGroup=g&batch=%d", url, batch), nil, http.StatusOK, &resp)
	if len(resp.Messages) != batch {
		t.Fatalf("pop batch=%d gave %d messages", batch, len(resp.Messages))
	}
	return resp
}

func ack(t *testing.T, url string, m api.Message, status string) {
	t.Helper()
	var res api.AckResult
	call(t, "POST", url+"/api/v1/ack", api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID,
		LeaseID: m.LeaseID, Status: status, ConsumerGroup: "g"}, http.StatusOK, &res)
	if !res.Success {
		t.Fatalf("ack %s of offset %d: %s", status, m.Offset, res.Error)
	}
}

// call sends body as JSON and decodes the answer into out.
func call(t *testing.T, method, url string, body any, wantStatus int, out any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantStatus {
		t.Fatalf("%s %s = %d %s, want %d", method, url, resp.StatusCode, raw, wantStatus)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, url, raw, err)
		}
	}
}

// scrape reads the text exposition into series -> value.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d %s", url, resp.StatusCode, raw)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET %s: Content-Type %q, want the text format", url, ct)
	}
	out := map[string]float64{}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("GET %s: bad line %q", url, line)
		}
		out[line[:i]] = v
	}
	return out
}

// lethe lists lethe's own series, for failure messages.
func lethe(series map[string]float64) string {
	var lines []string
	for k, v := range series {
		if strings.HasPrefix(k, "lethe_") && !strings.Contains(k, "_bucket") {
			lines = append(lines, fmt.Sprintf("  %s %v", k, v))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
