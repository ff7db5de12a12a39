package retention

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/queueopts"
	"github.com/lethe-mq/lethe/internal/tier"
)

// t0 is a Wednesday, 03:04:05 UTC; its 1w leaf ends at midnight.
var t0DayEnd = time.Date(2030, 1, 3, 0, 0, 0, 0, time.UTC)

// A 1w message lives 7 to 8 days (plus a check interval): its day leaf is
// kept until it is wholly 7 days old, never a second less, and dropped by
// the first check after. Finished data goes with the leaf; the audit row
// says what went; the low watermark moves past it.
func TestOneWeekTierDropsInsideItsBounds(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionTier": "7d"})
	e.pushSegment("q", "p", 3)
	e.consume("q", "p", "g", 3)
	leaf := "segments_1w_p20300102"

	e.clock.Set(t0DayEnd.Add(7*tier.Day - time.Second))
	if res := e.fullCycle(); res.TierDrop.Frames != 0 || len(e.segments("q", "p")) != 1 {
		t.Fatalf("a second before the leaf is 7 days old: dropped %+v, segments %v; want nothing dropped",
			res.TierDrop, e.segments("q", "p"))
	}
	e.clock.Set(t0DayEnd.Add(7 * tier.Day))
	res := e.fullCycle()
	if res.TierDrop.Frames != 3 || len(e.segments("q", "p")) != 0 || e.leafExists(leaf) {
		t.Fatalf("at 7 days: dropped %+v, segments %v, leaf kept %v; want the 3 finished messages gone with the leaf",
			res.TierDrop, e.segments("q", "p"), e.leafExists(leaf))
	}
	if lived := e.clock.Now().Sub(t0); lived < 7*tier.Day || lived > tier.OneWeek.LifeBounds(TierIntervalDefault).Max {
		t.Fatalf("the message lived %v, outside the 1w bounds", lived)
	}
	h := e.history("q")
	if len(h) != 1 || h[0].Rule != RuleTierDrop || h[0].Messages != 3 || len(h[0].Lost) != 0 {
		t.Fatalf("history %+v; want one tier_drop row of 3 messages, no loss", h)
	}
	if low := e.lowWatermark("q", "p"); low != 3 {
		t.Fatalf("low watermark %d after the drop, want 3", low)
	}
}

// A partition's pending frames move to the held area before it drops,
// with their offsets: a group that was offline for 10 days, and a required
// group that never connected, receive every message in order, held ones
// first; acks work on held frames; the held month goes once nothing in it
// is pending and the month is over.
func TestPendingFramesAreHeldAndServedInOrder(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionTier": "1w", "requiredGroups": []string{"late"}})
	e.pushSegment("q", "p", 2)
	e.consume("q", "p", "g", 1) // g read one of two
	e.clock.Advance(10 * tier.Day)
	e.pushSegment("q", "p", 2) // offsets 2, 3: live
	res := e.fullCycle()
	if res.HeldMove.Frames != 2 || res.TierDrop.Frames != 0 {
		t.Fatalf("10 days later: held %+v, dropped %+v; want the whole first segment held (the required group wants it)",
			res.HeldMove, res.TierDrop)
	}
	for _, group := range []string{"g", "late"} {
		want := []int64{1, 2, 3}
		if group == "late" {
			want = []int64{0, 1, 2, 3}
		}
		got := offsetsOf(e.consume("q", "p", group, len(want)))
		if !equalInts(got, want) {
			t.Fatalf("group %s read offsets %v, want %v in order", group, got, want)
		}
	}
	held := "segments_held_p203001"
	e.clock.Set(time.Date(2030, 2, 1, 0, 0, 0, 0, time.UTC))
	if res := e.fullCycle(); res.HeldDrop.Frames != 2 || e.leafExists(held) {
		t.Fatalf("the held month over and consumed: dropped %+v, leaf kept %v", res.HeldDrop, e.leafExists(held))
	}
}

// A held month with a frame some group wants stays, however old.
func TestHeldMonthStaysWhileAnythingIsPending(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionTier": "1w"})
	e.pushSegment("q", "p", 1)
	e.pop("q", "p", "g", 0) // subscribes g, reads nothing
	e.clock.Set(time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC))
	e.fullCycle()
	e.clock.Advance(400 * tier.Day)
	if res := e.fullCycle(); res.HeldDrop.Frames != 0 || !e.leafExists("segments_held_p203001") {
		t.Fatalf("a held message g never read went: %+v", res.HeldDrop)
	}
	if got := offsetsOf(e.consume("q", "p", "g", 1)); !equalInts(got, []int64{0}) {
		t.Fatalf("g read %v after 400 days, want offset 0", got)
	}
}

// A lease and a retry count survive the move: delivery state is keyed by
// offset, and the move keeps offsets.
func TestLeaseAndRetriesSurviveTheMove(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionTier": "1w", "retryDelay": 0, "leaseTime": 3600})
	e.pushSegment("q", "p", 1)
	first := e.pop("q", "p", "g", 1).Messages
	fail := e.ackStatus(first, "g", api.AckFailed)
	if !fail[0].Success {
		t.Fatalf("nack: %s", fail[0].Error)
	}
	again := e.pop("q", "p", "g", 1).Messages
	e.clock.Set(t0DayEnd.Add(7 * tier.Day))
	if res := e.fullCycle(); res.HeldMove.Frames != 1 {
		t.Fatalf("held %+v, want the leased message", res.HeldMove)
	}
	if len(again) != 1 || again[0].RetryCount != 1 {
		t.Fatalf("redelivery %+v, want retry count 1", again)
	}
	if r := e.ack(again, "g"); !r[0].Success {
		t.Fatalf("ack of a held message under its lease: %s", r[0].Error)
	}
	if n := len(e.pop("q", "p", "g", 10).Messages); n != 0 {
		t.Fatalf("after the ack %d messages left, want none", n)
	}
}

// quarantined: keep holds a dead letter past its partition; purge lets it
// go with the partition, audited.
func TestQuarantinedKeepAndPurge(t *testing.T) {
	t.Parallel()
	for _, q := range []string{"keep", "purge"} {
		e := setup(t)
		e.configure("q", map[string]any{"retentionTier": "1w", "quarantined": q})
		e.pushSegment("q", "p", 2)
		msgs := e.pop("q", "p", "g", 2).Messages
		e.ackStatus(msgs[:1], "g", "dlq")
		e.ack(msgs[1:], "g")
		e.clock.Set(t0DayEnd.Add(7 * tier.Day))
		res := e.fullCycle()
		left := e.count(`SELECT count(*) FROM lethe.dead_letters`)
		switch {
		case res.TierDrop.Frames != 2:
			t.Fatalf("%s: dropped %+v, want both messages (the dead letter is a copy)", q, res.TierDrop)
		case q == "keep" && (left != 1 || res.QuarantinePurged != 0):
			t.Fatalf("keep: %d dead letters left, %d purged; want it kept", left, res.QuarantinePurged)
		case q == "purge" && (left != 0 || res.QuarantinePurged != 1):
			t.Fatalf("purge: %d dead letters left, %d purged; want it gone with its partition", left, res.QuarantinePurged)
		}
	}
}

// A shorter tier on a queue holding data is not applied: the answer
// announces what it would delete and move; confirming applies it, and the
// change deletes exactly what it announced and keeps the rest.
func TestShorterTierWaitsForConfirmThenDeletesWhatItAnnounced(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.pushSegment("q", "p", 4) // forever, day 0: finished below
	e.consume("q", "p", "g", 4)
	e.clock.Advance(10 * tier.Day)
	e.pushSegment("q", "p", 3) // day 10: not consumed, inside 1w
	e.clock.Advance(tier.Day)

	resp := e.configureResp("q", `{"retentionTier":"1w"}`)
	c := resp.RetentionChange
	if c == nil || c.State != queueopts.ChangeAwaitingConfirm || resp.Options.RetentionTier != "forever" ||
		c.Delete.Messages != 4 || c.Move.Messages != 3 || c.Hold.Messages != 0 {
		t.Fatalf("configure 1w answered %+v (tier %s); want awaiting_confirm, delete 4, move 3, tier still forever",
			c, resp.Options.RetentionTier)
	}
	if res := e.fullCycle(); res.Total().Frames != 0 || len(e.segments("q", "p")) != 2 {
		t.Fatalf("before confirmation the cycle deleted %+v", res.Total())
	}
	conf, err := queueopts.New(e.eng).ConfirmTierChange(e.ctx, "q")
	if err != nil || conf.Delete.Messages != 4 || conf.Move.Messages != 3 {
		t.Fatalf("confirm = %+v, %v", conf, err)
	}
	res := e.fullCycle()
	if res.TierChange.Frames != 4 || res.TierMove.Frames != 3 || res.ChangesFinished != 1 {
		t.Fatalf("the change deleted %+v, moved %+v, finished %d; want 4 deleted, 3 moved, done",
			res.TierChange, res.TierMove, res.ChangesFinished)
	}
	if got := offsetsOf(e.consume("q", "p", "g", 3)); !equalInts(got, []int64{4, 5, 6}) {
		t.Fatalf("after the change g read %v, want 4..6", got)
	}
	if _, err := queueopts.New(e.eng).ConfirmTierChange(e.ctx, "q"); err == nil {
		t.Fatal("a second confirm found something to confirm")
	}
}

// Lengthening applies at once and keeps everything not yet dropped: the
// queue's data moves into the longer tier and outlives the old window.
func TestLongerTierAppliesAtOnceAndKeepsEverything(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionTier": "1w"})
	e.pushSegment("q", "p", 2)
	e.consume("q", "p", "g", 2)
	resp := e.configureResp("q", `{"retentionTier":"7w"}`)
	if resp.Options.RetentionTier != "7w" || resp.RetentionChange == nil || resp.RetentionChange.State != queueopts.ChangeRunning {
		t.Fatalf("configure 7w answered tier %s, change %+v; want 7w at once, running", resp.Options.RetentionTier, resp.RetentionChange)
	}
	e.clock.Set(t0DayEnd.Add(8 * tier.Day))
	if res := e.fullCycle(); res.TierMove.Frames != 2 || res.Total().Frames != 0 || len(e.segments("q", "p")) != 1 {
		t.Fatalf("moved %+v, deleted %+v; want both messages moved to 7w, nothing deleted", res.TierMove, res.Total())
	}
}

// A value set while a change runs waits; values in between are skipped.
func TestValuesSetWhileAChangeRunsWait(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *Config) { c.BatchSize = 1 })
	e.configure("q", map[string]any{"retentionTier": "1w"})
	e.pushSegment("q", "p", 1)
	e.configureResp("q", `{"retentionTier":"forever"}`) // lengthening: runs
	if c := e.configureResp("q", `{"retentionTier":"3w"}`).RetentionChange; c == nil || c.State != queueopts.ChangeQueued {
		t.Fatalf("3w while a change runs: %+v, want queued", c)
	}
	if c := e.configureResp("q", `{"retentionTier":"7w"}`).RetentionChange; c == nil || c.Next != "7w" {
		t.Fatalf("7w while a change runs: %+v, want it to replace 3w", c)
	}
	e.fullCycle()
	var tierNow string
	if err := e.pool.QueryRow(e.ctx, `SELECT retention_tier FROM lethe.queues WHERE name = 'q'`).Scan(&tierNow); err != nil {
		t.Fatal(err)
	}
	if tierNow != "forever" {
		t.Fatalf("after the first change the tier is %s; 7w is shorter than forever and the queue holds data: it must wait for confirmation", tierNow)
	}
	if n := e.count(`SELECT count(*) FROM lethe.retention_changes WHERE state = 'awaiting_confirm' AND to_tier = '7w'`); n != 1 {
		t.Fatalf("the waiting value did not become a change awaiting confirmation (3w skipped)")
	}
}

// Seconds rules keep working inside a tier, and delete first when shorter.
func TestSecondsRulesDeleteFirstInsideATier(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionTier": "7w", "retentionEnabled": true, "retentionSeconds": 3600})
	e.pushSegment("q", "p", 2)
	e.clock.Advance(2 * time.Hour)
	if res := e.cycle(); res.Retention.Frames != 2 {
		t.Fatalf("retentionSeconds inside a 7w tier deleted %+v, want both messages", res.Retention)
	}
}

// A configure refuses a tier or quarantined value it does not know, with
// the allowed values, and changes nothing.
func TestTierOptionsRefuseUnknownValues(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, opts := range []string{`{"retentionTier":"5d"}`, `{"quarantined":"drop"}`, `{"requiredGroups":[""]}`} {
		_, err := queueopts.New(e.eng).Configure(e.ctx, api.ConfigureRequest{Queue: "q", Options: json.RawMessage(opts)})
		if err == nil {
			t.Errorf("configure %s succeeded", opts)
		}
	}
	if n := e.count(`SELECT count(*) FROM lethe.queues`); n != 0 {
		t.Fatalf("rejected configures created %d queues", n)
	}
}

func (e *env) configureResp(queue, opts string) *api.ConfigureResponse {
	e.t.Helper()
	resp, err := queueopts.New(e.eng).Configure(e.ctx, api.ConfigureRequest{Queue: queue, Options: json.RawMessage(opts)})
	if err != nil {
		e.t.Fatalf("configure %s %s: %v", queue, opts, err)
	}
	return resp
}

func (e *env) ackStatus(msgs []api.Message, group, status string) []api.AckResult {
	e.t.Helper()
	reqs := make([]api.AckRequest, len(msgs))
	for i, m := range msgs {
		reqs[i] = api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID,
			Status: status, ConsumerGroup: group, Error: "test"}
	}
	res, err := e.eng.Ack(e.ctx, reqs, group)
	if err != nil {
		e.t.Fatalf("ack: %v", err)
	}
	return res
}

func offsetsOf(msgs []api.Message) []int64 {
	out := []int64{}
	for _, m := range msgs {
		out = append(out, m.Offset)
	}
	return out
}

// The held and quarantined gauges are counted at the tier check and stay
// until the next one.
func TestHeldGauges(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionTier": "1w", "requiredGroups": []string{"r"}})
	e.pushSegment("q", "p", 3)
	msgs := e.pop("q", "p", "g", 1).Messages
	e.ackStatus(msgs, "g", "dlq")
	e.clock.Set(t0DayEnd.Add(7 * tier.Day))
	e.fullCycle()
	e.cycle() // a cycle without the tier check keeps them
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"lethe_held_messages", gaugeValue(t, e.svc.metrics.heldMessages.WithLabelValues("q")), 3},
		{"lethe_quarantined_messages", gaugeValue(t, e.svc.metrics.quarantined.WithLabelValues("q")), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s{queue=q} = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// A leaf is made a little before its period begins (leafLead), not months
// ahead: every read of a partition starts a scan on every leaf. In the
// middle of a month the tier check keeps only the month's leaf of forever
// and of held; two days before the next month begins it makes that one
// too. Fails when leaves are made a fixed number of periods ahead.
func TestLeavesAreMadeJustAheadOfNeed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	leaves := func() string {
		t.Helper()
		rows, err := e.pool.Query(e.ctx, `SELECT parent || ' ' || to_char(lo AT TIME ZONE 'UTC', 'YYYY-MM') FROM lethe.leaves
			WHERE state = 'attached' AND parent IN ('segments_forever', 'segments_held') ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(got, ", ")
	}
	if !e.cycle().TierCheckRan {
		t.Fatal("the first cycle ran no tier check")
	}
	if got, want := leaves(), "segments_forever 2030-01, segments_held 2030-01"; got != want {
		t.Errorf("on %s the leaves are %s; want %s", e.clock.Now().Format(time.DateOnly), got, want)
	}
	e.clock.Set(time.Date(2030, 1, 30, 12, 0, 0, 0, time.UTC)) // February begins within leafLead
	if !e.cycle().TierCheckRan {
		t.Fatal("no tier check four weeks later")
	}
	if got, want := leaves(), "segments_forever 2030-01, segments_forever 2030-02, segments_held 2030-01, segments_held 2030-02"; got != want {
		t.Errorf("on %s the leaves are %s; want %s", e.clock.Now().Format(time.DateOnly), got, want)
	}
}
