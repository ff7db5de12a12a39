// Package tiertest drives a real lethe replica over HTTP with its test
// clock (LETHE_TEST_CLOCK=1): a week of retention tiers passes in seconds,
// and nothing but the public API is used.
package tiertest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/testserver"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// replica starts lethe with LETHE_TEST_CLOCK=1 on a clock that starts at a
// fixed Wednesday, so partitions' dates are the same on every run.
func replica(t *testing.T, mods ...func(*config.Server)) *client {
	t.Helper()
	base := clock.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	srv := testserver.Start(t, testserver.Options{Clock: base, Config: func(c *config.Server) {
		c.TestClock = true
		for _, m := range mods {
			m(c)
		}
	}})
	return &client{t: t, url: srv.URL}
}

// A group offline for 10 days on a 1w queue receives every message, in
// order: what its partitions held for it was moved to the held area before
// they were dropped.
func TestOfflineGroupGetsEveryMessageInOrder(t *testing.T) {
	t.Parallel()
	c := replica(t)
	c.do("POST", "/api/v1/configure", `{"queue":"orders","options":{"retentionTier":"1w"}}`, 200, nil)
	c.consume("orders", "billing", 0) // billing subscribes, then goes offline
	want := []string{}
	for day := range 10 {
		for i := range 3 {
			p := fmt.Sprintf(`"d%d-%d"`, day, i)
			want = append(want, p)
			c.do("POST", "/api/v1/push", `{"items":[{"queue":"orders","payload":`+p+`}]}`, 201, nil)
		}
		c.consume("orders", "audit", 3) // another group keeps up
		c.advance("24h")
		c.run()
	}
	var view api.RetentionView
	c.do("GET", "/api/v1/retention/tiers", "", 200, &view)
	if len(view.Held) != 1 || view.Held[0].Queue != "orders" || view.Held[0].Pending["billing"] == 0 ||
		view.Held[0].Pending["audit"] != 0 {
		t.Fatalf("held area %+v; want orders' messages held for billing only", view.Held)
	}
	if got := c.consume("orders", "billing", len(want)); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("billing after 10 days read\n%v\nwant\n%v", got, want)
	}
}

// A dead letter survives its partition (quarantined: keep, the default).
func TestDeadLetterSurvivesItsPartition(t *testing.T) {
	t.Parallel()
	c := replica(t)
	c.do("POST", "/api/v1/configure", `{"queue":"q","options":{"retentionTier":"1w"}}`, 200, nil)
	c.do("POST", "/api/v1/push", `{"items":[{"queue":"q","payload":"bad"},{"queue":"q","payload":"good"}]}`, 201, nil)
	msgs := c.pop("q", "g", 2)
	c.ack(msgs[0], "dlq")
	c.ack(msgs[1], "completed")
	c.advance("200h")
	run := c.run()
	if run.TierDropped.Frames != 2 {
		t.Fatalf("the run dropped %+v; want both messages' partition", run.TierDropped)
	}
	var dlq struct {
		Messages []json.RawMessage `json:"messages"`
	}
	c.do("GET", "/api/v1/dlq?queue=q", "", 200, &dlq)
	if len(dlq.Messages) != 1 || !strings.Contains(string(dlq.Messages[0]), `"bad"`) {
		t.Fatalf("dead letters after the drop: %s; want the bad message kept", dlq.Messages)
	}
}

// A shorter tier waits for confirmation, then deletes exactly what it
// announced; retention explain states the bounds.
func TestShorterTierWaitsForConfirmAndDeletesWhatItAnnounced(t *testing.T) {
	t.Parallel()
	c := replica(t, func(s *config.Server) { s.OperatorToken, s.AuthToken = "op", "user" })
	c.token, c.operator = "user", "op"
	c.do("POST", "/api/v1/test/clock", `{"advance":"1h"}`, 403, nil) // the test routes need the operator
	c.do("POST", "/api/v1/push", `{"items":[{"queue":"q","payload":1},{"queue":"q","payload":2},{"queue":"q","payload":3}]}`, 201, nil)
	c.consume("q", "g", 3)
	c.advance("240h")
	c.do("POST", "/api/v1/push", `{"items":[{"queue":"q","payload":4}]}`, 201, nil)
	var resp api.ConfigureResponse
	c.do("POST", "/api/v1/configure", `{"queue":"q","options":{"retentionTier":"7d"}}`, 200, &resp)
	ch := resp.RetentionChange
	if ch == nil || ch.State != "awaiting_confirm" || ch.Delete.Messages != 3 || ch.Hold.Messages != 0 ||
		ch.Move.Messages != 1 || resp.Options.RetentionTier != "forever" {
		t.Fatalf("configure 7d answered %+v (tier %s); want awaiting_confirm: delete 3, move 1", ch, resp.Options.RetentionTier)
	}
	if run := c.run(); run.Deleted.Frames != 0 {
		t.Fatalf("before confirmation the run deleted %+v", run.Deleted)
	}
	c.do("POST", "/api/v1/retention/changes/q/confirm", "", 403, nil) // not the operator
	c.token = "op"
	c.do("POST", "/api/v1/retention/changes/q/confirm", "", 200, nil)
	if run := c.run(); run.TierChange.Frames != ch.Delete.Messages || run.TierMoved.Frames != ch.Move.Messages {
		t.Fatalf("the change deleted %+v and moved %+v; announced delete %d, move %d",
			run.TierChange, run.TierMoved, ch.Delete.Messages, ch.Move.Messages)
	}
	var ex api.RetentionExplain
	c.do("GET", "/api/v1/retention/explain/q", "", 200, &ex)
	if ex.Tier != "1w" || len(ex.Bounds) == 0 || ex.Bounds[0].MinSeconds != 7*86400 || ex.Bounds[0].MaxSeconds != 8*86400+3600 {
		t.Fatalf("explain = %+v; want 1w, 7 days to 8 days and an hour", ex)
	}
	if got := c.consume("q", "g", 1); len(got) != 1 || got[0] != "4" {
		t.Fatalf("g read %v after the change, want the message inside the new window", got)
	}
}

// Without LETHE_TEST_CLOCK the test routes do not exist; with it the
// clock only moves forward.
func TestTestRoutesExistOnlyWithTheTestClock(t *testing.T) {
	t.Parallel()
	plain := &client{t: t, url: testserver.Start(t, testserver.Options{}).URL}
	plain.do("POST", "/api/v1/test/clock", `{"advance":"1h"}`, 404, nil)
	plain.do("POST", "/api/v1/test/retention/run", "", 404, nil)
	c := replica(t)
	c.do("POST", "/api/v1/test/clock", `{"advance":"-1h"}`, 400, nil)
	c.do("POST", "/api/v1/test/clock", `{"advance":"soon"}`, 400, nil)
}
