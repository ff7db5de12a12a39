package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// The retention tiers in the browser: a queue whose tier an operator
// shortened shows the change awaiting confirmation with what it announced,
// and its Confirm button confirms it (the API then says it runs); a held
// area with data shows its months with the API's figures.
func TestDashboardTierChangeAndHeldArea(t *testing.T) {
	chromium(t)
	clk := clock.NewFake(t0)
	srv := testserver.Start(t, testserver.Options{Clock: clk, Config: func(c *config.Server) {
		c.AuthToken, c.OperatorToken = plainToken, operatorToken
		c.TestClock = true
	}})
	d := &dash{t: t, srv: srv, clock: clk, api: &apiClient{t: t, url: srv.URL}}
	d.seedTiers()
	d.b = startBrowser(t, srv.URL)
	d.b.openIn("", "overview", "error")
	d.b.noErrors("no token", 401)
	d.b.do("stop the automatic refresh", chromedp.Click(chromedp.ID("auto-refresh")))
	before := d.b.renderCount()
	d.b.useToken(operatorToken)
	d.b.waitRendered(before, "overview", "ready")
	// The tokenless page's other requests may answer (401) after it showed
	// its error; they are logged by now.
	d.b.noErrors("requests made before the token", 401)

	d.confirmTierChangeFromTheQueuePage()
	d.heldAreaByMonthMatchesAPI()
	d.queuePageShowsAHold()
}

// A queue under a retention hold says so on its page, naming the hold.
func (d *dash) queuePageShowsAHold() {
	var h api.RetentionHold
	d.api.call("POST", "/api/v1/retention/holds", `{"queue":"archive","reason":"audit"}`, http.StatusCreated, &h)
	d.b.open("queue/archive", "queue")
	var shown string
	d.b.eval(`(document.querySelector('[data-held]') || {}).textContent || ''`, &shown)
	if want := fmt.Sprintf("by hold %d: nothing of this queue is deleted", h.ID); !strings.Contains(shown, want) {
		d.t.Errorf("the held queue's page says %q, want %q", shown, want)
	}
	d.api.call("DELETE", fmt.Sprintf("/api/v1/retention/holds/%d", h.ID), "", http.StatusOK, nil)
	d.b.refresh("queue")
	d.b.eval(`(document.querySelector('[data-held]') || {}).textContent || ''`, &shown)
	if shown != "" {
		d.t.Errorf("after the release the page still says %q", shown)
	}
	d.b.noErrors("a held queue's page")
}

// seedTiers: queue archive (tier 1w) whose group billing subscribed and
// went offline while audit read everything, past its week, so its day
// partition went to the held area; queue shrink (forever) read by g, with
// a shorter tier (7d, that is 1w) awaiting confirmation: it would delete the three
// old messages and move the new one.
func (d *dash) seedTiers() {
	d.api.call("POST", "/api/v1/configure", `{"queue":"archive","options":{"retentionTier":"1w"}}`, 200, nil)
	d.api.call("GET", "/api/v1/pop/queue/archive?consumerGroup=billing", "", http.StatusNoContent, nil)
	var items []api.PushItem
	for i := range 3 {
		items = append(items,
			api.PushItem{Queue: "archive", Partition: "p", Payload: json.RawMessage(fmt.Sprint(i))},
			api.PushItem{Queue: "shrink", Partition: "p", Payload: json.RawMessage(fmt.Sprint(i))})
	}
	d.api.push(items...)
	for _, q := range []struct{ queue, group string }{{"archive", "audit"}, {"shrink", "g"}} {
		for _, m := range d.api.pop(q.queue, "p", q.group, 3) {
			d.api.ack(m, q.group, "completed", "")
		}
	}
	d.clock.Advance(240 * time.Hour)
	d.api.push(api.PushItem{Queue: "shrink", Partition: "p", Payload: json.RawMessage(`3`)})
	var run api.RetentionRun
	d.api.call("POST", "/api/v1/test/retention/run", "", http.StatusOK, &run)
	if len(run.Failures) > 0 || run.HeldMoved.Frames != 3 {
		d.t.Fatalf("retention run: %+v; want archive's 3 messages moved to the held area", run)
	}
	var resp api.ConfigureResponse
	d.api.call("POST", "/api/v1/configure", `{"queue":"shrink","options":{"retentionTier":"7d"}}`, 200, &resp)
	if c := resp.RetentionChange; c == nil || c.State != "awaiting_confirm" {
		d.t.Fatalf("configure shrink 7d answered %+v; want a change awaiting confirmation", c)
	}
}

// The queue page shows the pending change as the API states it; Confirm
// (operator, after the confirmation dialog) confirms it.
func (d *dash) confirmTierChangeFromTheQueuePage() {
	var ex api.RetentionExplain
	d.api.get("/api/v1/retention/explain/shrink", &ex)
	c := ex.Change
	d.b.open("queue/shrink", "queue")
	row := d.cells("retention-change", "queue")["shrink"]
	for field, want := range map[string]string{"from": c.From, "to": c.To, "state": "awaiting_confirm",
		"delete": figure(c.Delete.Messages), "move": figure(c.Move.Messages), "hold": figure(c.Hold.Messages),
		"left": figure(c.Left)} {
		d.want("pending change: "+field, row[field], want)
	}
	d.b.screenshot("queue-change")
	before := d.b.renderCount()
	d.b.do("confirm the change", chromedp.Click(chromedp.CSS(`[data-table=retention-change] [data-action=confirm-change]`)))
	d.b.confirm()
	d.b.waitRendered(before, "queue", "ready")
	d.api.get("/api/v1/retention/explain/shrink", &ex)
	if ex.Tier != c.To || ex.Change == nil || ex.Change.State != "running" || ex.Change.ConfirmedAt == nil {
		d.t.Fatalf("after Confirm the API says tier %s, change %+v; want %s and the change running", ex.Tier, ex.Change, c.To)
	}
	d.want("the change's state after Confirm", d.cells("retention-change", "queue")["shrink"]["state"], "running")
	var buttons int
	d.b.eval(`document.querySelectorAll('[data-action=confirm-change]').length`, &buttons)
	if buttons != 0 {
		d.t.Errorf("a running change still shows %d Confirm buttons", buttons)
	}
	d.b.noErrors("confirm the change")
}

// The retention page's held area lists each month and queue with the
// API's messages, unread counts per group and quarantined dead letters.
func (d *dash) heldAreaByMonthMatchesAPI() {
	var view api.RetentionView
	d.api.get("/api/v1/retention/tiers", &view)
	if len(view.Held) == 0 {
		d.t.Fatal("the API shows no held area; the seed should have made one")
	}
	d.b.open("retention", "retention")
	rows := d.cells("held", "held")
	if len(rows) != len(view.Held) {
		d.t.Errorf("the held area shows %d rows, the API %d", len(rows), len(view.Held))
	}
	for _, m := range view.Held {
		row := rows[m.Month+"/"+m.Queue]
		var pending []string
		for g, n := range m.Pending {
			pending = append(pending, fmt.Sprintf("%s: %s", g, figure(n)))
		}
		d.want("held "+m.Month+" "+m.Queue+" messages", row["messages"], figure(m.Messages))
		d.want("held "+m.Month+" "+m.Queue+" quarantined", row["quarantined"], figure(m.Quarantined))
		if got := strings.Split(row["pending"], ", "); !sameSet(got, pending) {
			d.t.Errorf("held %s %s unread by group: the dashboard shows %q, the API %v", m.Month, m.Queue, row["pending"], m.Pending)
		}
	}
	d.want("archive's unread for billing", fmt.Sprint(view.Held[0].Pending["billing"]), "3")
	d.b.screenshot("retention-held")
	d.b.noErrors("held area")
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}
