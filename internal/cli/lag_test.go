package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
)

func TestLag(t *testing.T) {
	t.Parallel()
	srv, clk, s := serveAt(t, time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC))
	c := newTestClient(t, srv.URL)
	ctx := context.Background()

	wantContains(t, mustLethe(t, "", "lag", s), "no consumer groups yet")
	pushTxns(t, c, "orders", "", "o1", "o2", "o3")
	pushTxns(t, c, "emails", "", "e1")
	msgs, err := c.Pop(ctx, "orders", client.PopOptions{Group: "billing"})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("pop: %v, %v", msgs, err)
	}
	if _, err := c.Ack(ctx, msgs[0], api.AckCompleted, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Pop(ctx, "emails", client.PopOptions{AutoAck: true}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Minute)

	out := mustLethe(t, "", "lag", s)
	ls := lines(out)
	if len(ls) != 3 {
		t.Fatalf("lag printed %q, want a header and 2 rows", ls)
	}
	wantContains(t, ls[0], "QUEUE", "GROUP", "STATE", "LAG", "TIME-LAG", "TIME-TO-LOSS")
	wantContains(t, ls[1], "emails", "(queue mode)", "Stable", " 0 ")
	wantContains(t, ls[2], "orders", "billing", "Lagging", " 2 ", "10m0s", "1/1")

	groups := decode[[]api.GroupSummary](t, mustLethe(t, "", "lag", "orders", s, "--json"))
	if len(groups) != 1 || groups[0].Name != "billing" || groups[0].TotalLag != 2 || groups[0].MaxTimeLag != 600 {
		t.Fatalf("lag orders --json = %+v, want billing 2 behind by 600 s", groups)
	}
	wantContains(t, mustLethe(t, "", "lag", "emails", s), "(queue mode)")
	if _, err := lethe(t, "", "lag", "nope", s); err == nil || !strings.Contains(err.Error(), "queue nope does not exist") {
		t.Fatalf("lag of an unknown queue: %v", err)
	}
}

// TIME-TO-LOSS counts down to the moment the queue's rule deletes the
// oldest message a group has not read (leased ones count as unread).
func TestLagTimeToLoss(t *testing.T) {
	t.Parallel()
	_, clk, s := serveAt(t, time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC))

	mustLethe(t, "", "queue", "configure", "ticks", s, "--max-wait-time-seconds", "3600")
	mustLethe(t, "1\n2\n", "push", "ticks", s)
	mustLethe(t, "", "pop", "ticks", s, "--group", "dash", "--batch", "1")
	clk.Advance(40 * time.Minute)
	ls := lines(mustLethe(t, "", "lag", s))
	if len(ls) != 2 {
		t.Fatalf("lag printed %q, want a header and 1 row", ls)
	}
	wantContains(t, ls[1], "ticks", "dash", " 20m0s ")
	groups := decode[[]api.GroupSummary](t, mustLethe(t, "", "lag", s, "--json"))
	if len(groups) != 1 || groups[0].LossRule == nil || *groups[0].LossRule != "maxWaitTimeSeconds" ||
		groups[0].TimeToLossSeconds == nil || *groups[0].TimeToLossSeconds != 1200 {
		t.Fatalf("lag --json = %+v, want dash losing to maxWaitTimeSeconds in 1200 s", groups)
	}
	clk.Advance(30 * time.Minute)
	wantContains(t, lines(mustLethe(t, "", "lag", s))[1], "dash", " now ")
}

func TestTimeToLossString(t *testing.T) {
	t.Parallel()
	zero, hour := int64(0), int64(3600)
	for _, c := range []struct {
		in   *int64
		want string
	}{{nil, "-"}, {&zero, "now"}, {&hour, "1h0m"}} {
		if got := timeToLoss(c.in); got != c.want {
			t.Errorf("timeToLoss(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAgeString(t *testing.T) {
	t.Parallel()
	for s, want := range map[int64]string{0: "0s", 59: "59s", 61: "1m1s", 3600: "1h0m", 7380: "2h3m", 90000: "1d1h"} {
		if got := ageString(s); got != want {
			t.Errorf("ageString(%d) = %q, want %q", s, got, want)
		}
	}
}
