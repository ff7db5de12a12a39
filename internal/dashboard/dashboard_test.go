package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/testserver"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// t0 is where the replica's fake clock starts.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// dash is the system under test: a replica with auth on and a fake clock,
// the API as the test reads it, and a browser on the dashboard.
type dash struct {
	t     *testing.T
	srv   *testserver.Server
	clock *clock.Fake
	api   *apiClient
	b     *browser
}

// The dashboard in a real browser against a real replica: a new user's
// journey (push with the CLI, watch the message appear, consume it, see lag
// drop, let a retention rule delete something and see it on the plot,
// replay a dead letter), every page loading without a console error, the
// figures shown equal to the API's, and the operator token required (with
// a confirmation) for destructive buttons.
func TestDashboardInABrowser(t *testing.T) {
	chromium(t)                              // skip or fail before starting anything when there is none
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // the CLI reads no context of this machine
	clk := clock.NewFake(t0)
	srv := testserver.Start(t, testserver.Options{Clock: clk, Config: func(c *config.Server) {
		c.AuthToken, c.OperatorToken = plainToken, operatorToken
	}})
	d := &dash{t: t, srv: srv, clock: clk, api: &apiClient{t: t, url: srv.URL}}
	d.seed()
	clk.Advance(10 * time.Minute) // the seeded messages have waited a while
	d.b = startBrowser(t, srv.URL)

	d.tokenIsAsked()
	d.overviewMatchesAPI()
	d.journeyPushAndWatch()
	d.queuePageShowsLagAndTimeLeft()
	d.consumeAndSeeLagDrop()
	d.retentionDeletionOnThePlot()
	d.replayFromDeadLetters()
	d.skipToEndFromTheQueuePage()
	d.maintenanceNeedsTheOperator()
	d.slowPagesRefreshLessOften()
}

// A page that took long to load is refreshed automatically ten times as
// long after, not every 5 s: the page's requests are slowed down to make a
// render take more than 1.2 s.
func (d *dash) slowPagesRefreshLessOften() {
	b := d.b
	b.open("", "overview")
	var every string
	b.eval(`document.getElementById('refresh-every').textContent`, &every)
	if every != "every 5 s" {
		d.t.Errorf("after a quick render the refresh label says %q, want %q", every, "every 5 s")
	}
	b.do("slow the page's requests down", chromedp.Evaluate[chromedp.Void](`void (() => {
		const f = window.fetch;
		window.quickFetch = f;
		window.fetch = (...a) => new Promise((r) => setTimeout(r, 1200)).then(() => f(...a));
	})()`))
	b.refresh("overview")
	var ms int
	b.eval(`Number(document.getElementById('main').dataset.refreshMs)`, &ms)
	b.eval(`document.getElementById('refresh-every').textContent`, &every)
	if ms < 12000 || every != fmt.Sprintf("every %d s", ms/1000) {
		d.t.Fatalf("after a render of over 1.2 s the next refresh is in %d ms, labelled %q; want at least 12,000 ms, labelled in seconds", ms, every)
	}
	var auto bool
	b.eval(`document.getElementById('auto-refresh').checked`, &auto)
	if !auto {
		b.do("start the automatic refresh", chromedp.Click(chromedp.ID("auto-refresh")))
	}
	before := b.renderCount()
	time.Sleep(6500 * time.Millisecond) // past the 5 s the refresh used to come at
	if after := b.renderCount(); after != before {
		d.t.Errorf("the slow page refreshed itself within 6.5 s (render %s → %s), want it to wait %d ms", before, after, ms)
	}
	b.do("stop the automatic refresh", chromedp.Click(chromedp.ID("auto-refresh")))
	b.do("requests at full speed again", chromedp.Evaluate[chromedp.Void](`void (window.fetch = window.quickFetch)`))
	b.refresh("overview")
	b.eval(`document.getElementById('refresh-every').textContent`, &every)
	if every != "every 5 s" {
		d.t.Errorf("after a quick render again the refresh label says %q, want %q", every, "every 5 s")
	}
	b.noErrors("slow pages")
}

// seed: queue orders (retention 1 h) with two partitions; group billing
// reads eu and dead-letters one message; group audit leases one of us and
// reads nothing more.
func (d *dash) seed() {
	d.api.call("POST", "/api/v1/configure", `{"queue":"orders","options":{"retentionEnabled":true,"retentionSeconds":3600}}`, 200, nil)
	d.api.call("POST", "/api/v1/configure", `{"queue":"ticks"}`, 200, nil)
	var items []api.PushItem
	for i := range 3 {
		items = append(items, api.PushItem{Queue: "orders", Partition: "eu", TransactionID: fmt.Sprintf("eu-%d", i),
			Payload: json.RawMessage(fmt.Sprintf(`{"order":%d,"region":"eu"}`, i))})
	}
	for i := range 2 {
		items = append(items, api.PushItem{Queue: "orders", Partition: "us", TransactionID: fmt.Sprintf("us-%d", i),
			Payload: json.RawMessage(fmt.Sprintf(`{"order":%d,"region":"us"}`, i))})
	}
	items = append(items, api.PushItem{Queue: "ticks", Payload: json.RawMessage(`{"price":101.5}`)})
	d.api.push(items...)
	eu := d.api.pop("orders", "eu", "billing", 3)
	d.api.ack(eu[0], "billing", "completed", "")
	d.api.ack(eu[1], "billing", "dlq", "card declined")
	d.api.ack(eu[2], "billing", "completed", "")
	d.api.pop("orders", "us", "audit", 1) // leased, never acked
}

// Without a token the page says which token to enter; with it, it loads.
func (d *dash) tokenIsAsked() {
	b := d.b
	b.openIn("", "overview", "error")
	var msg string
	b.eval(`document.getElementById('banner').textContent`, &msg)
	if !strings.Contains(msg, "LETHE_AUTH_TOKEN") {
		d.t.Errorf("without a token the banner says %q, want it to name LETHE_AUTH_TOKEN", msg)
	}
	b.noErrors("no token", 401)
	b.do("stop the automatic refresh", chromedp.Click(chromedp.ID("auto-refresh")))
	before := b.renderCount()
	b.useToken(operatorToken)
	b.waitRendered(before, "overview", "ready")
	// The page rendered ready with the token; a 401 logged now answers a
	// request the tokenless page made before (it shows its error at the
	// first one).
	b.noErrors("token entered", 401)
}

// cells reads a table's rows: data-KEY of each row → field → text.
func (d *dash) cells(table, key string) map[string]map[string]string {
	d.t.Helper()
	out := map[string]map[string]string{}
	d.b.eval(fmt.Sprintf(`Object.fromEntries([...document.querySelectorAll('[data-table=%q] tbody tr')].map(tr =>
		[tr.dataset[%q], Object.fromEntries([...tr.querySelectorAll('td[data-field]')].map(td => [td.dataset.field, td.textContent]))]))`,
		table, key), &out)
	return out
}

func (d *dash) tiles() map[string]string {
	d.t.Helper()
	out := map[string]string{}
	d.b.eval(`Object.fromEntries([...document.querySelectorAll('[data-tile]')].map(t => [t.dataset.tile, t.querySelector('.value').textContent]))`, &out)
	return out
}

// figure is a number as the dashboard prints it: "1,234".
func figure(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func (d *dash) want(what, got, want string) {
	d.t.Helper()
	if got != want {
		d.t.Errorf("%s: the dashboard shows %q, the API says %q", what, got, want)
	}
}

// The overview's tiles and queue rows equal the API's figures.
func (d *dash) overviewMatchesAPI() {
	d.b.open("", "overview")
	d.checkOverview()
	d.b.screenshot("overview")
	d.b.noErrors("overview")
}

func (d *dash) checkOverview() {
	var st api.Status
	d.api.get("/api/v1/status", &st)
	tiles := d.tiles()
	d.want("queues tile", tiles["queues"], figure(st.Queues))
	d.want("messages tile", tiles["messages"], figure(st.Messages.Total))
	d.want("dead letters tile", tiles["deadLetters"], figure(st.DeadLetters))
	d.want("consumer groups tile", tiles["consumerGroups"], figure(st.ConsumerGroups))
	d.want("active leases tile", tiles["activeLeases"], figure(st.ActiveLeases))
	var list struct {
		Queues []struct {
			Name           string
			Partitions     int64
			Messages       api.MessageCounts
			ConsumerGroups []struct{ TotalLag int64 }
		}
	}
	d.api.get("/api/v1/status/queues?limit=1000", &list)
	rows := d.cells("queues", "queue")
	if len(rows) != len(list.Queues) {
		d.t.Errorf("overview lists %d queues, the API %d", len(rows), len(list.Queues))
	}
	for _, q := range list.Queues {
		row := rows[q.Name]
		behind := 0
		for _, g := range q.ConsumerGroups {
			if g.TotalLag > 0 {
				behind++
			}
		}
		d.want(q.Name+" depth", row["depth"], figure(q.Messages.Total))
		d.want(q.Name+" dead letters", row["deadLetters"], figure(q.Messages.DeadLetter))
		d.want(q.Name+" partitions", row["partitions"], figure(q.Partitions))
		d.want(q.Name+" groups behind", row["groupsBehind"], fmt.Sprintf("%d of %d", behind, len(q.ConsumerGroups)))
	}
}

// A push with the CLI shows in the overview's depth and in the message
// browser, with its payload and its state per group.
func (d *dash) journeyPushAndWatch() {
	lethe(d.t, "push", "orders", "--partition", "us", "--txn", "journey-1", "--data", `{"step":"journey"}`,
		"--server", d.srv.URL, "--token", plainToken)
	d.b.refresh("overview")
	d.checkOverview()
	d.b.noErrors("overview after the push")

	d.b.open("messages?queue=orders", "messages")
	var page api.MessagePage
	d.api.get("/api/v1/messages?queue=orders&limit=50", &page)
	rows := d.cells("messages", "txn")
	if len(rows) != len(page.Messages) {
		d.t.Errorf("the browser lists %d messages of orders, the API %d", len(rows), len(page.Messages))
	}
	for _, m := range page.Messages {
		d.want(m.TransactionID+" status", rows[m.TransactionID]["status"], m.Status)
		d.want(m.TransactionID+" offset", rows[m.TransactionID]["offset"], figure(m.Offset))
	}
	if _, ok := rows["journey-1"]; !ok {
		d.t.Fatalf("the message pushed with the CLI is not in the browser: %v", rows)
	}
	d.b.do("open the message", chromedp.Click(chromedp.CSS(`[data-table=messages] tr[data-txn="journey-1"]`)))
	d.b.waitFor("the message's payload", `(document.querySelector('[data-message="journey-1"] pre.json') || {}).textContent?.includes('"journey"')`)
	var states map[string]string
	d.b.eval(`Object.fromEntries([...document.querySelectorAll('[data-table=message-groups] tbody tr')].map(tr =>
		[tr.children[0].textContent, tr.children[1].textContent]))`, &states)
	var detail api.MessageDetail
	d.api.get("/api/v1/messages/"+page.Messages[0].PartitionID+"/journey-1", &detail)
	if len(states) != len(detail.ConsumerGroups) {
		d.t.Errorf("delivery state per group: the page shows %v, the API %v", states, detail.ConsumerGroups)
	}
	for g, s := range detail.ConsumerGroups {
		d.want("journey-1 state for "+g, states[g], s)
	}
	d.b.screenshot("messages")
	d.b.noErrors("message browser")

	d.b.open("messages?queue=orders&txn=eu-0", "messages")
	if rows := d.cells("messages", "txn"); len(rows) != 1 || rows["eu-0"] == nil {
		d.t.Errorf("filter by transaction id eu-0 shows %v, want that one message", rows)
	}
	d.b.noErrors("message browser by transaction id")
}

// The queue page's groups, lags and partitions equal the API's, and the
// time left before unread data would be deleted is what docs/dashboard.md
// says: the oldest unread message's time plus the window, minus now.
func (d *dash) queuePageShowsLagAndTimeLeft() {
	d.b.open("queue/orders", "queue")
	detail, at := d.queueDetail()
	rows := d.cells("groups", "group")
	for _, g := range detail.ConsumerGroups {
		d.want(g.Name+" lag", rows[g.Name]["totalLag"], figure(g.TotalLag))
		d.want(g.Name+" leases", rows[g.Name]["leasesHeld"], figure(int64(g.LeasesHeld)))
	}
	parts := d.cells("partitions", "partition")
	for _, p := range detail.Partitions {
		d.want(p.Name+" messages", parts[p.Name]["messages"], figure(p.Messages.Total))
		d.want(p.Name+" next offset", parts[p.Name]["nextOffset"], figure(p.NextOffset))
	}
	var left map[string]string
	d.b.eval(`Object.fromEntries([...document.querySelectorAll('[data-table=groups] tbody tr')].map(tr =>
		[tr.dataset.group, (tr.querySelector('[data-left]') || {dataset: {}}).dataset.left]))`, &left)
	for group, want := range expectedTimeLeft(d.t, detail, at, 3600) {
		got := left[group]
		if want < 0 {
			if got != "none" {
				d.t.Errorf("time left of %s: the page shows %q, want none (nothing unread)", group, got)
			}
			continue
		}
		var secs float64
		if _, err := fmt.Sscan(got, &secs); err != nil || math.Abs(secs-want) > 1 {
			d.t.Errorf("time left of %s: the page shows %q s, want %.0f s", group, got, want)
		}
	}
	d.b.screenshot("queue")
	d.b.noErrors("queue page")
}

type queueDetail struct {
	ConsumerGroups []struct {
		Name              string
		TotalLag          int64
		LeasesHeld        int
		TimeToLossSeconds *int64
	}
	Partitions []struct {
		Name           string
		NextOffset     int64
		Messages       api.MessageCounts
		ConsumerGroups []api.GroupPartition
	}
}

func (d *dash) queueDetail() (queueDetail, time.Time) {
	var detail queueDetail
	d.api.get("/api/v1/status/queues/orders?includePartitions=true&limit=1000", &detail)
	var rs api.RetentionStatus
	d.api.get("/api/v1/retention/status?queue=orders", &rs)
	return detail, rs.At
}

// expectedTimeLeft: per group, seconds until its oldest unread message
// is deleted by a window of windowSeconds (the oldest unread segment's
// newest message, as the sweep judges it: every push here is one
// segment, so its oldest message); -1 when nothing is unread. The API
// must say the same (lethe.group_loss).
func expectedTimeLeft(t *testing.T, detail queueDetail, at time.Time, windowSeconds int) map[string]float64 {
	out := map[string]float64{}
	for _, p := range detail.Partitions {
		for _, g := range p.ConsumerGroups {
			if _, seen := out[g.ConsumerGroup]; !seen {
				out[g.ConsumerGroup] = -1
			}
			if g.OldestUnconsumedAt == nil {
				continue
			}
			left := g.OldestUnconsumedAt.Add(time.Duration(windowSeconds) * time.Second).Sub(at).Seconds()
			if cur := out[g.ConsumerGroup]; cur < 0 || left < cur {
				out[g.ConsumerGroup] = left
			}
		}
	}
	for _, g := range detail.ConsumerGroups {
		api := float64(-1)
		if g.TimeToLossSeconds != nil {
			api = float64(*g.TimeToLossSeconds)
		}
		if math.Abs(api-out[g.Name]) > 1 {
			t.Errorf("time to loss of %s: the API says %v s, want %.0f s", g.Name, api, out[g.Name])
		}
	}
	return out
}

// Group billing consumes what is left on us: its lag drops to 0 on the page.
func (d *dash) consumeAndSeeLagDrop() {
	before := d.cells("groups", "group")["billing"]["totalLag"]
	for _, m := range d.api.pop("orders", "us", "billing", 10) {
		d.api.ack(m, "billing", "completed", "")
	}
	d.b.refresh("queue")
	after := d.cells("groups", "group")["billing"]["totalLag"]
	if before == "0" || after != "0" {
		d.t.Errorf("billing's lag on the queue page: %s before consuming, %s after; want it to drop to 0", before, after)
	}
	d.b.noErrors("queue page after consuming")
}

// Two hours later a retention cycle deletes orders' old segments, audit's
// unread messages among them: the plot shows the deletion by rule and the
// loss table names audit.
func (d *dash) retentionDeletionOnThePlot() {
	d.clock.Advance(2 * time.Hour)
	res, err := d.srv.Retention.RunCycle(context.Background())
	if err != nil {
		d.t.Fatalf("retention cycle: %v", err)
	}
	d.b.open("retention", "retention")
	var series struct {
		Totals struct{ RetentionMsgs int64 }
	}
	d.api.get("/api/v1/analytics/retention", &series)
	if series.Totals.RetentionMsgs == 0 {
		d.t.Fatalf("the retention cycle deleted nothing by retentionSeconds: %+v", res)
	}
	var plotted int64
	d.b.eval(`[...document.querySelectorAll('[data-chart=deletions] rect[data-rule=retention]')].reduce((s, r) => s + Number(r.dataset.value), 0)`, &plotted)
	if plotted != series.Totals.RetentionMsgs {
		d.t.Errorf("the plot shows %d messages deleted by retention, the API %d", plotted, series.Totals.RetentionMsgs)
	}
	var hist api.RetentionHistory
	d.api.get("/api/v1/retention/history?lostOnly=true", &hist)
	lost := map[string]int64{}
	for _, e := range hist.Entries {
		for _, l := range e.Lost {
			lost[l.Group] += l.Messages
		}
	}
	var shown map[string]int64
	d.b.eval(`[...document.querySelectorAll('[data-table=lost] tbody tr')].reduce((m, tr) =>
		(m[tr.dataset.group] = (m[tr.dataset.group] || 0) + Number(tr.querySelector('[data-field=messages]').textContent.replace(/,/g, '')), m), {})`, &shown)
	if lost["audit"] == 0 || fmt.Sprint(shown) != fmt.Sprint(lost) {
		d.t.Errorf("lost unread by group: the page shows %v, the API %v (audit must have lost some)", shown, lost)
	}
	d.b.screenshot("retention")
	d.b.noErrors("retention page")
}

// Replay from the dead-letter page (operator, confirmed) re-delivers the
// message: billing pops it again with its payload.
func (d *dash) replayFromDeadLetters() {
	var dlq api.DeadLetterList
	d.api.get("/api/v1/dlq", &dlq)
	if dlq.Total != 1 {
		d.t.Fatalf("dead letters: %+v, want the one of the seed", dlq)
	}
	dead := dlq.Messages[0]
	d.b.open("dlq", "dlq")
	d.b.do("inspect the dead letter", chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-table=dead-letters] tr[data-id=%q]`, dead.ID))))
	d.b.waitFor("its payload", fmt.Sprintf(`!!document.querySelector('[data-dead-letter=%q] pre.json')`, dead.ID))
	d.b.screenshot("dlq")
	before := d.b.renderCount()
	d.b.do("replay", chromedp.Click(chromedp.CSS(`[data-action=replay]`)))
	d.b.confirm()
	d.b.waitRendered(before, "dlq", "ready")
	var result, text string
	d.b.eval(`document.querySelector('[data-action-status=dlq]').dataset.result || ''`, &result)
	d.b.eval(`document.querySelector('[data-action-status=dlq]').textContent`, &text)
	if result != "ok" {
		d.t.Fatalf("replay: the page says %q (%s)", text, result)
	}
	d.api.get("/api/v1/dlq", &dlq)
	if dlq.Total != 0 {
		d.t.Errorf("after the replay the API still lists %d dead letters", dlq.Total)
	}
	again := d.api.pop("orders", "eu", "billing", 10)
	if len(again) != 1 || !sameJSON(again[0].Data, dead.Data) || !strings.Contains(text, again[0].TransactionID) {
		d.t.Errorf("after the replay billing pops %+v, want the dead letter's payload %s under the id the page named (%s)", again, dead.Data, text)
	}
	d.b.noErrors("dead letters")

	// Delete: a second dead letter, dropped from the page.
	d.api.ack(d.api.pop("ticks", api.DefaultPartition, "pricing", 1)[0], "pricing", "dlq", "stale price")
	d.api.get("/api/v1/dlq", &dlq)
	d.b.refresh("dlq")
	d.b.do("inspect the second dead letter", chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-table=dead-letters] tr[data-id=%q]`, dlq.Messages[0].ID))))
	before = d.b.renderCount()
	d.b.do("delete", chromedp.Click(chromedp.CSS(`[data-action=delete]`)))
	d.b.confirm()
	d.b.waitRendered(before, "dlq", "ready")
	d.api.get("/api/v1/dlq", &dlq)
	var shown int
	d.b.eval(`document.querySelectorAll('[data-table=dead-letters] tbody tr').length`, &shown)
	if dlq.Total != 0 || shown != 0 {
		d.t.Errorf("after the delete the API lists %d dead letters and the page %d, want none", dlq.Total, shown)
	}
	d.b.noErrors("dead letter deleted")
}

// "Skip to end" on the queue page (operator, confirmed) seeks a group past
// what it has not read: its lag is 0 in the API and on the page.
func (d *dash) skipToEndFromTheQueuePage() {
	d.api.push(api.PushItem{Queue: "ticks", Payload: json.RawMessage(`{"price":102}`)},
		api.PushItem{Queue: "ticks", Payload: json.RawMessage(`{"price":103}`)})
	d.api.ack(d.api.pop("ticks", api.DefaultPartition, "watcher", 1)[0], "watcher", "completed", "")
	d.b.open("queue/ticks", "queue")
	d.want("watcher's lag before the seek", d.cells("groups", "group")["watcher"]["totalLag"], "2")
	before := d.b.renderCount()
	d.b.do("skip to end", chromedp.Click(chromedp.CSS(`[data-table=groups] tr[data-group=watcher] [data-action=seek-end]`)))
	d.b.confirm()
	d.b.waitRendered(before, "queue", "ready")
	var groups []api.GroupSummary
	d.api.get("/api/v1/consumer-groups", &groups)
	for _, g := range groups {
		if g.Name == "watcher" && g.TotalLag != 0 {
			d.t.Errorf("after skip to end the API says watcher's lag is %d", g.TotalLag)
		}
	}
	d.want("watcher's lag after the seek", d.cells("groups", "group")["watcher"]["totalLag"], "0")
	d.b.noErrors("skip to end")
}

// Maintenance: with the plain token the switch is refused and says the
// operator token is needed; with the operator token it turns on and off.
func (d *dash) maintenanceNeedsTheOperator() {
	b := d.b
	b.useToken(plainToken)
	b.open("maintenance", "maintenance")
	b.do("turn push maintenance on", chromedp.Click(chromedp.CSS(`[data-action=toggle-push]`)))
	b.confirm()
	b.waitFor("the refusal", `document.querySelector('[data-action-status=maintenance]').dataset.result === 'error'`)
	var text string
	b.eval(`document.querySelector('[data-action-status=maintenance]').textContent`, &text)
	if !strings.Contains(text, "LETHE_OPERATOR_TOKEN") {
		d.t.Errorf("the refusal says %q, want it to name LETHE_OPERATOR_TOKEN", text)
	}
	var m api.PushMaintenance
	d.api.get("/api/v1/system/maintenance", &m)
	if m.Enabled {
		d.t.Fatal("maintenance turned on with the plain token")
	}
	b.noErrors("maintenance refused", 403)

	b.useToken(operatorToken)
	b.open("maintenance", "maintenance")
	for _, on := range []bool{true, false} {
		before := b.renderCount()
		b.do("toggle push maintenance", chromedp.Click(chromedp.CSS(`[data-action=toggle-push]`)))
		b.confirm()
		b.waitRendered(before, "maintenance", "ready")
		d.api.get("/api/v1/system/maintenance", &m)
		var shown string
		b.eval(`document.querySelector('[data-switch=push]').dataset.enabled`, &shown)
		if m.Enabled != on || shown != fmt.Sprint(on) {
			d.t.Errorf("after the toggle the API says enabled=%v, the page %s; want %v", m.Enabled, shown, on)
		}
		if on {
			b.screenshot("maintenance")
		}
	}
	b.noErrors("maintenance")
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
