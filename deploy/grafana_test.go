package deploy

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// metricName finds the names in a PromQL expression that are lethe's (or
// the Go and process collectors').
var metricName = regexp.MustCompile(`\b(?:lethe|go|process)_[a-z0-9_]+\b`)

// TestGrafanaDashboardUsesRealMetrics runs a server through every kind of
// work a panel shows (push, pop, ack, a dead letter, a retention deletion),
// scrapes its /metrics and checks that every metric a panel queries is
// among the series it exposes.
func TestGrafanaDashboardUsesRealMetrics(t *testing.T) {
	t.Parallel()
	exposed := scrapeAfterWork(t)
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(readFile(t, "grafana-lethe.json")), &dash); err != nil {
		t.Fatalf("grafana-lethe.json: %v", err)
	}
	checked := 0
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, tg := range p.Targets {
			names := metricName.FindAllString(tg.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: %q uses no lethe metric", p.Title, tg.Expr)
			}
			for _, n := range names {
				checked++
				if !exposed[familyOf(n, exposed)] {
					t.Errorf("panel %q uses %s, which lethe does not expose", p.Title, n)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d metric uses checked; the dashboard did not parse as expected", checked)
	}
}

// familyOf maps a histogram's _bucket, _sum and _count series to its family.
func familyOf(name string, families map[string]bool) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && families[base] {
			return base
		}
	}
	return name
}

// scrapeAfterWork returns the metric families a busy replica exposes.
func scrapeAfterWork(t *testing.T) map[string]bool {
	t.Helper()
	clk := clock.NewFake(time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC))
	srv := testserver.Start(t, testserver.Options{Clock: clk})
	c, _ := client.New(srv.URL)
	ctx := context.Background()
	if _, err := c.Configure(ctx, api.ConfigureRequest{Queue: "shop", Options: []byte(`{"maxWaitTimeSeconds": 60}`)}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := c.Push(ctx, api.PushItem{Queue: "shop", Payload: []byte(`{"n":1}`)}); err != nil {
			t.Fatalf("push %d: %v", i, err)
		}
	}
	for _, status := range []string{api.AckCompleted, api.AckDLQ} {
		msgs, err := c.Pop(ctx, "shop", client.PopOptions{Group: "billing"})
		if err != nil || len(msgs) != 1 {
			t.Fatalf("pop: %v, %v", msgs, err)
		}
		if _, err := c.Ack(ctx, msgs[0], status, "declined"); err != nil && status == api.AckCompleted {
			t.Fatal(err)
		}
	}
	clk.Advance(2 * time.Minute)
	if res, err := srv.Retention.RunCycle(ctx); err != nil || res.MaxWait.Frames == 0 {
		t.Fatalf("cycle: %+v, %v; want an eviction", res, err)
	}
	pushAfter := api.PushItem{Queue: "shop", Payload: []byte(`1`)}
	if _, err := c.Push(ctx, pushAfter); err != nil { // data for the next cycle's age gauges
		t.Fatal(err)
	}
	if _, err := srv.Retention.RunCycle(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	families := map[string]bool{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "# TYPE "); ok {
			families[strings.Fields(rest)[0]] = true
		}
	}
	return families
}
