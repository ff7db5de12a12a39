package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/testserver"
)

func TestTailBrowsesWithoutConsuming(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC))
	srv := testserver.Start(t, testserver.Options{Clock: clk})
	s := "--server=" + srv.URL
	c := newTestClient(t, srv.URL)
	pushTxns(t, c, "logs", "p", "t1", "t2")
	clk.Advance(time.Hour)
	pushTxns(t, c, "logs", "p", "t3")

	out := mustLethe(t, "", "tail", "logs", s)
	ls := lines(out)
	if len(ls) != 3 || !strings.Contains(ls[0], "t1") || !strings.Contains(ls[2], "t3") {
		t.Fatalf("tail printed %q, want t1, t2, t3 in order", ls)
	}
	wantContains(t, ls[0], "2030-01-02T03:00:00.000Z  logs/p #0  t1  {\"txn\":\"t1\"}")

	if ls := lines(mustLethe(t, "", "tail", "logs", s, "-n", "2")); len(ls) != 2 || !strings.Contains(ls[0], "t2") {
		t.Fatalf("tail -n 2 printed %q, want t2 and t3", ls)
	}
	out = mustLethe(t, "", "tail", "logs", s, "--from", "2030-01-02T03:30:00Z", "--json")
	ls = lines(out)
	var m api.Message
	if len(ls) != 1 || json.Unmarshal([]byte(ls[0]), &m) != nil || m.TransactionID != "t3" || string(m.Data) != `{"txn":"t3"}` || m.Offset != 2 {
		t.Fatalf("tail --from --json printed %q, want t3 only as one JSON line", out)
	}

	// Nothing was consumed: a group still receives all three.
	msgs, err := c.Pop(context.Background(), "logs", client.PopOptions{Group: "after", Batch: 10})
	if err != nil || len(msgs) != 3 {
		t.Fatalf("after tail, a group popped %d messages (%v), want 3", len(msgs), err)
	}
}

func TestTailSaysWhenAPayloadIsNoLongerAddressable(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC))
	srv := testserver.Start(t, testserver.Options{Clock: clk})
	pushTxns(t, newTestClient(t, srv.URL), "old", "", "ancient")
	// The sidecar drops its hashes by whole partitions once they are past
	// the 15-minute floor of the hash window: a day later they are gone.
	clk.Advance(24 * time.Hour)
	if res, err := srv.Retention.RunCycle(context.Background()); err != nil || res.TxnsPurged == 0 {
		t.Fatalf("cycle: %+v, %v; want the hash purged", res, err)
	}
	out := mustLethe(t, "", "tail", "old", "--server="+srv.URL)
	wantContains(t, out, "ancient  (payload no longer addressable)")
}

func TestTailFollowPrintsEachNewMessageOnce(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	c := newTestClient(t, srv.URL)
	pushTxns(t, c, "live", "", "before")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, "", &out, &errOut, "tail", "live", "--follow", "--interval", "100ms", "--server="+srv.URL)
	}()
	waitFor(t, "tail --follow", out.String, "before")
	pushTxns(t, c, "live", "", "after-1")
	pushTxns(t, c, "live", "other", "after-2")
	waitFor(t, "tail --follow", out.String, "after-2")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("tail --follow ended with %v after an interrupt, want nil", err)
	}
	for _, txn := range []string{"before", "after-1", "after-2"} {
		if n := strings.Count(out.String(), "  "+txn+"  "); n != 1 {
			t.Errorf("%s printed %d times, want once:\n%s", txn, n, out.String())
		}
	}
}

func TestTailGroupConsumesAndAcks(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	s := "--server=" + srv.URL
	c := newTestClient(t, srv.URL)
	pushTxns(t, c, "jobs", "", "j1", "j2", "j3")

	out := mustLethe(t, "", "tail", "jobs", "--group", "audit", s)
	if ls := lines(out); len(ls) != 3 || !strings.Contains(ls[0], "j1") {
		t.Fatalf("tail --group printed %q, want j1..j3", ls)
	}
	if out := mustLethe(t, "", "tail", "jobs", "--group", "audit", s); out != "" {
		t.Fatalf("a second tail --group printed %q, want nothing: the first acked all", out)
	}
	groups := decode[[]api.GroupSummary](t, mustLethe(t, "", "lag", "jobs", s, "--json"))
	if len(groups) != 1 || groups[0].Name != "audit" || groups[0].TotalLag != 0 {
		t.Fatalf("lag after tail --group: %+v, want audit with no lag", groups)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var live, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, "", &live, &errOut, "tail", "jobs", "--group", "audit", "--follow", "--json", s)
	}()
	pushTxns(t, c, "jobs", "", "j4")
	waitFor(t, "tail --group --follow", live.String, `"transactionId":"j4"`)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("tail --group --follow ended with %v, want nil", err)
	}
	waitFor(t, "lag after the followed message", func() string { return mustLethe(t, "", "lag", "jobs", s) }, "audit  Stable  0")
}

func TestTailBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tail"}, "missing queue name"},
		{[]string{"tail", "q", "--from", "yesterday"}, "--from must be an RFC 3339 time"},
		{[]string{"tail", "q", "--lines", "5000"}, "--lines must be between 0 and 1000"},
		{[]string{"tail", "q", "--group", "g", "--lines", "5"}, "--lines only applies without --group"},
		{[]string{"tail", "q", "--interval", "1ms"}, "--interval must be at least 100ms"},
	} {
		if _, err := lethe(t, "", tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("lethe %v: %v, want %q", tc.args, err, tc.want)
		}
	}
}
