package engine_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/store"
)

func TestCorePopEmptyAndUnknown(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	if resp := e.pop(engine.PopRequest{Queue: "never-pushed"}); len(resp.Messages) != 0 {
		t.Errorf("pop of an unknown queue = %v, want nothing", corePayloads(resp))
	}
	e.push("q", "", `1`)
	e.popN(engine.PopRequest{Queue: "q"}, 1)
	if resp := e.pop(engine.PopRequest{Queue: "q", Group: "g", Partition: "nope"}); len(resp.Messages) != 0 {
		t.Errorf("pop of an unknown partition = %v, want nothing", corePayloads(resp))
	}
	if resp := e.pop(engine.PopRequest{Queue: "q"}); len(resp.Messages) != 0 {
		t.Errorf("second queue-mode pop while the first holds the lease = %v, want nothing", corePayloads(resp))
	}
}

func TestCorePopBatchAndFields(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	pushed := e.pushItems(
		api.PushItem{Queue: "b", Partition: "p", Payload: []byte(`1`), TransactionID: "a", TraceID: "tr-a"},
		api.PushItem{Queue: "b", Partition: "p", Payload: []byte(`2`), TransactionID: "b"},
		api.PushItem{Queue: "b", Partition: "p", Payload: []byte(`3`), TransactionID: "c"},
	)
	resp := e.popN(engine.PopRequest{Queue: "b", Group: "g", Batch: 2}, 2)
	if !resp.Success || resp.Queue != "b" || resp.Partition != "p" || resp.PartitionID != pushed[0].PartitionID ||
		resp.LeaseID == "" || resp.ConsumerGroup != "g" || resp.PartitionsClaimed != 1 {
		t.Errorf("pop response header = %+v", resp)
	}
	for i, m := range resp.Messages {
		if m.ID != pushed[i].MessageID || m.TransactionID != pushed[i].TransactionID || m.PartitionID != pushed[i].PartitionID ||
			m.LeaseID != resp.LeaseID || m.Offset != int64(i) || m.RetryCount != 0 || m.Queue != "b" || m.Partition != "p" || m.ConsumerGroup != "g" {
			t.Errorf("message %d = %+v", i, m)
		}
		if ts, err := time.Parse(time.RFC3339Nano, m.CreatedAt); err != nil || !ts.Equal(coreT0) {
			t.Errorf("message %d createdAt %q, want the fake clock's %s", i, m.CreatedAt, coreT0)
		}
	}
	if resp.Messages[0].TraceID != "tr-a" {
		t.Errorf("traceId = %q, want tr-a", resp.Messages[0].TraceID)
	}
	for _, m := range resp.Messages {
		e.ackMsg(m, api.AckCompleted)
	}
	rest := e.popN(engine.PopRequest{Queue: "b", Group: "g", Batch: 10}, 1)
	if rest.Messages[0].TransactionID != "c" {
		t.Errorf("after acking two, got %s, want c", rest.Messages[0].TransactionID)
	}
}

func TestCorePopByPartitionAndWildcard(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	for _, p := range []string{"a", "b", "c"} {
		e.push("w", p, fmt.Sprintf(`"%s1"`, p), fmt.Sprintf(`"%s2"`, p))
	}
	byPart := e.popN(engine.PopRequest{Queue: "w", Partition: "b", Group: "g1", Batch: 10}, 2)
	if got := strings.Join(corePayloads(byPart), ","); got != `"b1","b2"` {
		t.Errorf("pop of partition b = %s", got)
	}
	// Wildcard pops, one partition each, visit every partition.
	seen := map[string][]string{}
	for range 3 {
		resp := e.popN(engine.PopRequest{Queue: "w", Group: "g2", Batch: 10}, 2)
		if resp.PartitionsClaimed != 1 {
			t.Errorf("partitionsClaimed = %d, want 1", resp.PartitionsClaimed)
		}
		for _, m := range resp.Messages {
			if m.Partition != resp.Partition {
				t.Errorf("message of %s in a pop of %s", m.Partition, resp.Partition)
			}
		}
		seen[resp.Partition] = corePayloads(resp)
	}
	if len(seen) != 3 {
		t.Errorf("three wildcard pops claimed %v, want each of a, b, c once", seen)
	}
	if resp := e.pop(engine.PopRequest{Queue: "w", Group: "g2"}); len(resp.Messages) != 0 {
		t.Errorf("fourth wildcard pop (all leased) = %v, want nothing", corePayloads(resp))
	}
}

func TestCorePopPartitionsClaimsUpToNUnderOneLease(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	for i := range 5 {
		e.push("multi", fmt.Sprint("p", i), `1`, `2`)
	}
	resp := e.popN(engine.PopRequest{Queue: "multi", Group: "g", Batch: 10, MaxPartitions: 3}, 6)
	if resp.PartitionsClaimed != 3 {
		t.Errorf("partitionsClaimed = %d, want 3", resp.PartitionsClaimed)
	}
	parts := map[string]bool{}
	for _, m := range resp.Messages {
		parts[m.Partition] = true
		if m.LeaseID != resp.LeaseID || resp.LeaseID == "" {
			t.Errorf("message of %s has lease %q, want the pop's one lease %q", m.Partition, m.LeaseID, resp.LeaseID)
		}
	}
	if len(parts) != 3 {
		t.Errorf("messages from partitions %v, want 3", parts)
	}
	// One ack batch settles every partition's lease.
	acks := make([]api.AckRequest, len(resp.Messages))
	for i, m := range resp.Messages {
		acks[i] = api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID, ConsumerGroup: "g"}
	}
	for i, r := range e.ack(acks...) {
		if !r.Success || !r.LeaseReleased {
			t.Errorf("ack %d = %+v, want success and the lease released", i, r)
		}
	}
	rest := e.popN(engine.PopRequest{Queue: "multi", Group: "g", Batch: 10, MaxPartitions: 100}, 4)
	if rest.PartitionsClaimed != 2 {
		t.Errorf("second pop claimed %d partitions, want the 2 left", rest.PartitionsClaimed)
	}
}

func TestCorePopBatchIsAGlobalCapOverPartitions(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	for i := range 5 {
		e.push("cap", fmt.Sprint("p", i), `1`, `2`)
	}
	// Queen: batch=3&partitions=5 gives 3 messages, not 3 per partition.
	resp := e.popN(engine.PopRequest{Queue: "cap", Group: "g", Batch: 3, MaxPartitions: 5}, 3)
	if resp.PartitionsClaimed != 2 {
		t.Errorf("partitionsClaimed = %d, want 2 (2 messages of one, 1 of the next)", resp.PartitionsClaimed)
	}
	if n := e.count(`SELECT count(*) FROM lethe.cursors WHERE lease_id = $1`, resp.LeaseID); n != 2 {
		t.Errorf("%d cursors hold lease %s, want the 2 claimed partitions", n, resp.LeaseID)
	}
	// The 3 partitions not leased give all they have.
	next := e.popN(engine.PopRequest{Queue: "cap", Group: "g", Batch: 100, MaxPartitions: 5}, 6)
	if next.PartitionsClaimed != 3 {
		t.Errorf("next pop claimed %d partitions, want 3", next.PartitionsClaimed)
	}
	// The partition cut short keeps its second message for after its lease.
	for _, m := range resp.Messages {
		e.ackMsg(m, api.AckCompleted)
	}
	last := e.popN(engine.PopRequest{Queue: "cap", Group: "g", Batch: 100, MaxPartitions: 5}, 1)
	if last.Messages[0].Offset != 1 || last.Messages[0].Partition != resp.Messages[2].Partition {
		t.Errorf("last pop = %+v, want offset 1 of %s", last.Messages[0], resp.Messages[2].Partition)
	}
}

func TestCorePopSharedLeaseExtendsAndExpiresTogether(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.configure("shared", `{"leaseTime": 60}`)
	for i := range 3 {
		e.push("shared", fmt.Sprint("p", i), `1`)
	}
	resp := e.popN(engine.PopRequest{Queue: "shared", Group: "g", Batch: 10, MaxPartitions: 3}, 3)
	e.clock.Advance(50 * time.Second)
	until, err := e.eng.ExtendLease(e.ctx, resp.LeaseID, 120)
	if err != nil {
		t.Fatal(err)
	}
	if want := e.clock.Now().Add(120 * time.Second); !until.Equal(want) {
		t.Errorf("extended to %s, want %s", until, want)
	}
	if n := e.count(`SELECT count(*) FROM lethe.cursors WHERE lease_id = $1 AND lease_until = $2`, resp.LeaseID, until); n != 3 {
		t.Errorf("%d of the 3 partitions' leases were extended", n)
	}
	// Past the old expiry nothing is redelivered: every partition was renewed.
	e.clock.Advance(20 * time.Second)
	if again := e.pop(engine.PopRequest{Queue: "shared", Group: "g", Batch: 10, MaxPartitions: 3}); len(again.Messages) != 0 {
		t.Errorf("after the extend a pop got %v, want nothing", corePayloads(again))
	}
	// Past the new one all three come back, each counted as failed once.
	e.clock.Advance(101 * time.Second)
	e.clock.Advance(time.Duration(api.DefaultQueueOptions().RetryDelay) * time.Millisecond)
	again := e.popN(engine.PopRequest{Queue: "shared", Group: "g", Batch: 10, MaxPartitions: 3}, 3)
	for _, m := range again.Messages {
		if m.RetryCount != 1 {
			t.Errorf("redelivered %s with retryCount %d, want 1", m.Partition, m.RetryCount)
		}
	}
	if _, err := e.eng.ExtendLease(e.ctx, resp.LeaseID, 10); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("extending the expired, taken-over lease: %v, want ErrNotFound", err)
	}
}

func TestCorePopConsumerGroupsFanOutQueueModeShares(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.push("fan", "", `1`, `2`, `3`)
	for _, g := range []string{"billing", "audit"} {
		resp := e.popN(engine.PopRequest{Queue: "fan", Group: g, Batch: 10, AutoAck: true}, 3)
		if got := strings.Join(corePayloads(resp), ","); got != "1,2,3" {
			t.Errorf("group %s got %s, want every message", g, got)
		}
	}
	// Queue mode is one shared cursor: consumers split the messages.
	var got []string
	for range 3 {
		resp := e.popN(engine.PopRequest{Queue: "fan", Batch: 1}, 1)
		if resp.ConsumerGroup != "" || resp.Messages[0].ConsumerGroup != "" {
			t.Errorf("queue-mode pop names group %q", resp.ConsumerGroup)
		}
		got = append(got, corePayloads(resp)...)
		e.ackMsg(resp.Messages[0], api.AckCompleted)
	}
	if strings.Join(got, ",") != "1,2,3" {
		t.Errorf("queue-mode consumers got %v, want 1,2,3 once each", got)
	}
	if resp := e.pop(engine.PopRequest{Queue: "fan"}); len(resp.Messages) != 0 {
		t.Errorf("queue mode after acking all = %v", corePayloads(resp))
	}
}

func TestCorePopLeaseBlocksGroupUntilExpiry(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.configure("lease", `{"leaseTime": 30, "retryDelay": 0}`)
	e.push("lease", "", `1`, `2`)
	first := e.popN(engine.PopRequest{Queue: "lease", Group: "g", Batch: 2}, 2)
	var until time.Time
	if err := e.pool.QueryRow(e.ctx, `SELECT lease_until FROM lethe.cursors WHERE group_name = 'g'`).Scan(&until); err != nil {
		t.Fatal(err)
	}
	if !until.Equal(coreT0.Add(30 * time.Second)) {
		t.Errorf("lease_until = %s, want now + leaseTime = %s", until, coreT0.Add(30*time.Second))
	}
	e.clock.Advance(29 * time.Second)
	if resp := e.pop(engine.PopRequest{Queue: "lease", Group: "g", Batch: 2}); len(resp.Messages) != 0 {
		t.Fatalf("second consumer got %v while the lease is live", corePayloads(resp))
	}
	// Another group is not blocked.
	e.popN(engine.PopRequest{Queue: "lease", Group: "other", Batch: 2}, 2)
	e.clock.Advance(2 * time.Second)
	second := e.popN(engine.PopRequest{Queue: "lease", Group: "g", Batch: 2}, 2)
	if second.LeaseID == first.LeaseID {
		t.Error("the redelivery reuses the expired lease id")
	}
	for i, m := range second.Messages {
		if m.ID != first.Messages[i].ID {
			t.Errorf("redelivered %s at %d, want %s", m.ID, i, first.Messages[i].ID)
		}
	}
	if second.Messages[0].RetryCount != 1 {
		t.Errorf("first redelivered message has retryCount %d, want 1", second.Messages[0].RetryCount)
	}
	// The old consumer's ack now fails: its lease was taken over.
	res := e.ack(api.AckRequest{TransactionID: first.Messages[0].TransactionID, PartitionID: first.PartitionID,
		LeaseID: first.LeaseID, Status: api.AckCompleted, ConsumerGroup: "g"})
	if res[0].Success || !strings.Contains(res[0].Error, "lease") {
		t.Errorf("ack with the expired lease = %+v, want success false naming the lease", res[0])
	}
}

// The retry delay of an expired lease counts from the expiry, not from when
// a pop notices it: an hour after a lease ran out, the next pop gets the
// messages at once.
func TestCorePopLeaseExpiredLongAgoIsRedeliveredAtOnce(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.configure("stale", `{"leaseTime": 30, "retryDelay": 5000}`)
	e.push("stale", "", `1`)
	first := e.popN(engine.PopRequest{Queue: "stale", Group: "g"}, 1)
	e.clock.Advance(time.Hour)
	again := e.popN(engine.PopRequest{Queue: "stale", Group: "g"}, 1)
	if again.Messages[0].ID != first.Messages[0].ID || again.Messages[0].RetryCount != 1 {
		t.Errorf("redelivery = %+v", again.Messages[0])
	}
}

func TestCorePopSubscriptionModes(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.push("sub", "p1", `"old"`)
	e.push("sub", "p2", `"old2"`)
	e.clock.Advance(10 * time.Second)
	fromAt := e.clock.Now()

	for _, req := range []engine.PopRequest{
		{Queue: "sub", Group: "new-mode", SubscriptionMode: "new"},
		{Queue: "sub", Group: "from-now", SubscriptionFrom: "now"},
		{Queue: "sub", Group: "new-part", SubscriptionMode: "new", Partition: "p1"},
	} {
		if resp := e.pop(req); len(resp.Messages) != 0 {
			t.Errorf("%s: first pop got %v, want nothing older than the subscription", req.Group, corePayloads(resp))
		}
	}
	e.clock.Advance(10 * time.Second)
	e.push("sub", "p1", `"new"`)
	e.push("sub", "p3", `"new3"`)
	for _, req := range []engine.PopRequest{
		{Queue: "sub", Group: "new-mode", Batch: 10, MaxPartitions: 10},
		{Queue: "sub", Group: "from-now", Batch: 10, MaxPartitions: 10},
	} {
		resp := e.pop(req)
		got := corePayloads(resp)
		slices.Sort(got)
		if strings.Join(got, ",") != `"new","new3"` {
			t.Errorf("%s after new pushes got %v, want only the new messages", req.Group, got)
		}
	}
	resp := e.pop(engine.PopRequest{Queue: "sub", Group: "new-part", Partition: "p1", Batch: 10})
	if strings.Join(corePayloads(resp), ",") != `"new"` {
		t.Errorf("new-mode pop of p1 got %v, want only \"new\"", corePayloads(resp))
	}
	// A timestamp between the old and the new messages.
	ts := fromAt.Format(time.RFC3339Nano)
	resp = e.pop(engine.PopRequest{Queue: "sub", Group: "ts", SubscriptionFrom: ts, Batch: 10, MaxPartitions: 10})
	got := corePayloads(resp)
	slices.Sort(got)
	if strings.Join(got, ",") != `"new","new3"` {
		t.Errorf("subscriptionFrom=%s got %v, want the messages after it", ts, got)
	}
	// All (the default) starts at the oldest message.
	resp = e.pop(engine.PopRequest{Queue: "sub", Group: "all", Batch: 10, MaxPartitions: 10})
	if len(resp.Messages) != 4 {
		t.Errorf("subscriptionMode all got %v, want all 4", corePayloads(resp))
	}
	var mode string
	if err := e.pool.QueryRow(e.ctx, `SELECT mode FROM lethe.subscriptions WHERE group_name = 'new-mode'`).Scan(&mode); err != nil || mode != "new" {
		t.Errorf("stored mode %q (%v), want new", mode, err)
	}
	if _, err := e.eng.Pop(e.ctx, engine.PopRequest{Queue: "sub", Group: "x", SubscriptionFrom: "yesterday"}); !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("subscriptionFrom=yesterday: err %v, want ErrInvalid", err)
	}
}

// Queen never refuses a subscriptionMode: "new" means from now, anything
// else from the oldest message; queue mode ignores it.
func TestCorePopSubscriptionModeIsNeverRefused(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.push("any", "", `"old"`)
	e.clock.Advance(time.Second)
	for _, mode := range []string{"from_beginning", "latest", "ALL", "New", "x y"} {
		resp := e.pop(engine.PopRequest{Queue: "any", Group: "g-" + mode, SubscriptionMode: mode, AutoAck: true})
		if got := strings.Join(corePayloads(resp), ","); got != `"old"` {
			t.Errorf("subscriptionMode %q got %s, want the old message (anything but new means all)", mode, got)
		}
	}
	if resp := e.pop(engine.PopRequest{Queue: "any", Group: "g-new", SubscriptionMode: "new"}); len(resp.Messages) != 0 {
		t.Errorf("subscriptionMode new got %v, want nothing older", corePayloads(resp))
	}
	resp := e.pop(engine.PopRequest{Queue: "any", SubscriptionMode: "new", SubscriptionFrom: "now"})
	if got := strings.Join(corePayloads(resp), ","); got != `"old"` {
		t.Errorf("queue mode with subscriptionMode new got %s, want the old message (queue mode ignores it)", got)
	}
}

func TestCorePopDelayedProcessing(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.configure("delayed", `{"delayedProcessing": 60}`)
	e.push("delayed", "", `"early"`)
	e.clock.Advance(30 * time.Second)
	e.push("delayed", "", `"late"`)
	if resp := e.pop(engine.PopRequest{Queue: "delayed", Batch: 10}); len(resp.Messages) != 0 {
		t.Fatalf("pop 30 s after push got %v, want nothing before 60 s", corePayloads(resp))
	}
	e.clock.Advance(31 * time.Second)
	resp := e.popN(engine.PopRequest{Queue: "delayed", Batch: 10}, 1)
	if corePayloads(resp)[0] != `"early"` {
		t.Errorf("got %v, want only the early message", corePayloads(resp))
	}
	e.ackMsg(resp.Messages[0], api.AckCompleted)
	e.clock.Advance(30 * time.Second)
	e.popN(engine.PopRequest{Queue: "delayed", Batch: 10}, 1)
}

// With delayedProcessing, partitions whose messages are not visible yet must
// not starve a partition whose message is visible.
func TestCorePopDelayedPartitionsDoNotStarveReadyOne(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.configure("starve", `{"delayedProcessing": 60}`)
	e.push("starve", "ready", `"r1"`)
	e.clock.Advance(61 * time.Second)
	e.ackMsg(e.popN(engine.PopRequest{Queue: "starve", Group: "g"}, 1).Messages[0], api.AckCompleted)
	e.push("starve", "ready", `"r2"`)
	e.clock.Advance(61 * time.Second) // r2 is visible now
	for i := range 4 {
		e.push("starve", fmt.Sprint("delayed-", i), `"d"`) // visible in 60 s
	}
	for attempt := range 3 {
		resp := e.pop(engine.PopRequest{Queue: "starve", Group: "g"})
		if len(resp.Messages) == 1 && corePayloads(resp)[0] == `"r2"` {
			return
		}
		t.Logf("pop %d got %v", attempt, corePayloads(resp))
	}
	t.Fatal("three wildcard pops never delivered the visible message r2")
}

func TestCorePopWindowBuffer(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.configure("window", `{"windowBuffer": 10}`)
	e.push("window", "", `1`)
	e.clock.Advance(6 * time.Second)
	e.push("window", "", `2`) // restarts the window
	e.clock.Advance(6 * time.Second)
	for _, p := range []string{"", "Default"} {
		if resp := e.pop(engine.PopRequest{Queue: "window", Partition: p, Batch: 10}); len(resp.Messages) != 0 {
			t.Fatalf("pop (partition %q) 6 s after the last push got %v, want nothing inside the 10 s window", p, corePayloads(resp))
		}
	}
	e.clock.Advance(5 * time.Second)
	resp := e.popN(engine.PopRequest{Queue: "window", Batch: 10}, 2)
	if strings.Join(corePayloads(resp), ",") != "1,2" {
		t.Errorf("after the window got %v, want both", corePayloads(resp))
	}
}

func TestCorePopAutoAck(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.push("auto", "", `1`, `2`, `3`)
	resp := e.popN(engine.PopRequest{Queue: "auto", Group: "g", Batch: 2, AutoAck: true}, 2)
	if resp.LeaseID != "" || resp.Messages[0].LeaseID != "" {
		t.Errorf("autoAck pop holds lease %q", resp.LeaseID)
	}
	if n := e.count(`SELECT count(*) FROM lethe.cursors WHERE group_name = 'g' AND lease_id IS NULL AND committed = 1`); n != 1 {
		t.Errorf("cursor after autoAck pop: %d rows with no lease and committed 1, want 1", n)
	}
	// The next pop needs no ack and no lease expiry.
	next := e.popN(engine.PopRequest{Queue: "auto", Group: "g", Batch: 2, AutoAck: true}, 1)
	if corePayloads(next)[0] != "3" {
		t.Errorf("second autoAck pop got %v", corePayloads(next))
	}
	e.clock.Advance(time.Hour)
	if resp := e.pop(engine.PopRequest{Queue: "auto", Group: "g", Batch: 10}); len(resp.Messages) != 0 {
		t.Errorf("autoAcked messages came back: %v", corePayloads(resp))
	}
}

func TestCorePopWaitWakesOnPush(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	// The leaves the push appends to exist, as lethe serve makes them at
	// start: the latency measured is the wake-up's, not a CREATE TABLE's.
	if err := store.EnsureLeaves(e.ctx, e.pool, []string{"forever", store.TierTxns}, coreT0, 1); err != nil {
		t.Fatal(err)
	}
	type result struct {
		resp *api.PopResponse
		err  error
		at   time.Time
	}
	done := make(chan result, 1)
	go func() {
		resp, err := e.eng.Pop(e.ctx, engine.PopRequest{Queue: "lp", Wait: true, Timeout: 10 * time.Second})
		done <- result{resp, err, time.Now()}
	}()
	e.sig.Waiting.WaitFor(t, func(q string) bool { return q == "lp" })
	pushedAt := time.Now()
	e.push("lp", "", `"wake"`)
	e.sig.Woken.WaitFor(t, func(q string) bool { return q == "lp" })
	r := <-done
	if r.err != nil || len(r.resp.Messages) != 1 {
		t.Fatalf("long poll = %+v, %v", r.resp, r.err)
	}
	if lat := r.at.Sub(pushedAt); lat > time.Second {
		t.Errorf("long poll answered %s after the push, want under 1 s", lat)
	} else {
		t.Logf("long poll answered %s after the push", lat)
	}
	start := time.Now()
	resp, err := e.eng.Pop(e.ctx, engine.PopRequest{Queue: "lp", Wait: true, Timeout: 300 * time.Millisecond})
	if err != nil || len(resp.Messages) != 0 {
		t.Fatalf("empty long poll = %+v, %v", resp, err)
	}
	if el := time.Since(start); el < 300*time.Millisecond || el > 3*time.Second {
		t.Errorf("empty long poll with timeout 300 ms took %s", el)
	}
}

func TestCorePopValidation(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.push("v", "", `1`)
	before := e.rowCounts()
	for _, req := range []engine.PopRequest{
		{Queue: ""},
		{Queue: "v", Batch: -1},
		{Queue: "v", Batch: engine.MaxBatch + 1},
		{Queue: "v", Timeout: -time.Second},
		{Queue: "v", Timeout: engine.MaxPopTimeout + time.Second},
		{Queue: "v", MaxPartitions: -1},
		{Queue: "v", MaxPartitions: engine.MaxPopPartitions + 1},
		{Queue: "v", Group: strings.Repeat("g", 600)},
		{Queue: "v", Partition: "bad\x01name"},
	} {
		if _, err := e.eng.Pop(e.ctx, req); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("pop %+v: err %v, want ErrInvalid", req, err)
		}
	}
	coreSameCounts(t, before, e.rowCounts())
}

// A lease released on a partition that has more messages wakes a long poll
// of the group at once: it does not wait for a push or the re-poll.
func TestCorePopWaitWakesOnLeaseRelease(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.push("rel", "p", `1`, `2`)
	e.sig.Woken.WaitFor(t, func(q string) bool { return q == "rel" }) // the push's
	held := e.popN(engine.PopRequest{Queue: "rel", Group: "g"}, 1)
	type result struct {
		resp *api.PopResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := e.eng.Pop(e.ctx, engine.PopRequest{Queue: "rel", Group: "g", Wait: true, Timeout: time.Minute})
		done <- result{resp, err}
	}()
	e.sig.Waiting.WaitFor(t, func(q string) bool { return q == "rel" })
	e.ackMsg(held.Messages[0], api.AckCompleted)
	e.sig.Woken.WaitFor(t, func(q string) bool { return q == "rel" })
	r := <-done
	if r.err != nil || len(r.resp.Messages) != 1 || string(r.resp.Messages[0].Data) != "2" {
		t.Fatalf("long poll after the release = %+v, %v, want message 2", r.resp, r.err)
	}
}
