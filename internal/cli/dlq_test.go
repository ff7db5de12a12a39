package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// deadLetters pushes txns to queue and has group dead-letter each one,
// with the error "boom <txn>".
func deadLetters(t *testing.T, c *client.Client, queue, group string, txns ...string) {
	t.Helper()
	ctx := context.Background()
	pushTxns(t, c, queue, "", txns...)
	msgs, err := c.Pop(ctx, queue, client.PopOptions{Group: group, Batch: len(txns)})
	if err != nil || len(msgs) != len(txns) {
		t.Fatalf("pop %d: %d, %v", len(txns), len(msgs), err)
	}
	for _, m := range msgs {
		if res, err := c.Ack(ctx, m, api.AckDLQ, "boom "+m.TransactionID); err != nil || !res.DLQ {
			t.Fatalf("ack dlq %s: %+v, %v", m.TransactionID, res, err)
		}
	}
}

func TestDLQListShowReplay(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	s := "--server=" + srv.URL
	c := newTestClient(t, srv.URL)
	deadLetters(t, c, "orders", "billing", "d1", "d2", "d3")

	out := mustLethe(t, "", "dlq", "list", s)
	wantContains(t, out, "ID", "QUEUE/PARTITION", "orders/Default", "billing", "boom d1", "3 dead letters")
	list := decode[api.DeadLetterList](t, mustLethe(t, "", "dlq", "list", s, "--queue", "orders", "--json"))
	if list.Total != 3 || len(list.Messages) != 3 || list.Messages[2].TransactionID != "d1" {
		t.Fatalf("dlq list --json = %+v, want 3, the oldest failure last", list)
	}
	wantContains(t, mustLethe(t, "", "dlq", "list", s, "--limit", "1"), "1 to 1 of 3 dead letters: see more with --offset 1")
	first := list.Messages[2]

	out = mustLethe(t, "", "dlq", "show", first.ID, s)
	wantContains(t, out, "dead letter  "+first.ID, "group        billing", "error        boom d1", "data\n{\n  \"txn\": \"d1\"\n}")
	if d := decode[api.DeadLetter](t, mustLethe(t, "", "dlq", "show", first.ID, s, "--json")); d.ID != first.ID || d.ErrorMessage != "boom d1" {
		t.Fatalf("dlq show --json = %+v", d)
	}

	out = mustLethe(t, "", "dlq", "replay", first.ID, s)
	wantContains(t, out, fmt.Sprintf("replayed dead letter %s to orders/Default at offset 3 as transaction ", first.ID), "replayed 1 dead letter")
	out = mustLethe(t, "", "dlq", "replay", first.ID, s)
	wantContains(t, out, "dead letter "+first.ID+" is already gone", "replayed 0 dead letters (1 already gone)")
	if _, err := lethe(t, "", "dlq", "show", first.ID, s); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("show of a replayed dead letter: %v", err)
	}

	_, _, err := letheErr(t, "n\n", "dlq", "replay", "--all", "--queue", "orders", s)
	if err == nil || !strings.Contains(err.Error(), "did not replay the 2 dead letters: answer y, or add --yes") {
		t.Fatalf("replay --all answered n: %v", err)
	}
	out, errOut, err := letheErr(t, "y\n", "dlq", "replay", "--all", "--queue", "orders", "--group", "billing", s)
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, errOut, "replay 2 dead letters of queue orders, group billing? [y/N]", "replay: 1/2 (50%)", "replay: 2/2 (100%)")
	wantContains(t, out, "replayed 2 dead letters of queue orders, group billing")
	wantContains(t, mustLethe(t, "", "dlq", "list", s), "no dead letters")

	// The replays are at the end of the log, in their first order.
	msgs, err := c.Pop(context.Background(), "orders", client.PopOptions{Group: "billing", Batch: 10})
	if err != nil || len(msgs) != 3 || !strings.Contains(string(msgs[0].Data), `"d1"`) || !strings.Contains(string(msgs[2].Data), `"d3"`) {
		t.Fatalf("after the replays billing popped %+v (%v), want d1, d2, d3 again", msgs, err)
	}
}

func TestDLQDeleteNeedsConfirmationAndTheOperatorToken(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{Config: func(c *config.Server) {
		c.AuthToken, c.OperatorToken = "user-token", "op-token"
	}})
	s := "--server=" + srv.URL
	c := newTestClient(t, srv.URL, client.WithToken("user-token"))
	deadLetters(t, c, "orders", "billing", "x1", "x2", "x3")
	list := decode[api.DeadLetterList](t, mustLethe(t, "", "dlq", "list", s, "--token", "user-token", "--json"))
	id := list.Messages[0].ID

	if _, err := lethe(t, "", "dlq", "delete", id, s, "--token", "user-token"); err == nil || !strings.Contains(err.Error(), "did not delete") {
		t.Fatalf("delete without an answer: %v, want a refusal", err)
	}
	_, err := lethe(t, "", "dlq", "delete", id, s, "--token", "user-token", "--yes")
	if err == nil || !strings.Contains(err.Error(), "--operator-token") || !strings.Contains(err.Error(), "deleted 0 of 1 dead letters") {
		t.Fatalf("delete with the user token: %v, want a 403 naming --operator-token", err)
	}
	out := mustLethe(t, "y\n", "dlq", "delete", id, s, "--token", "user-token", "--operator-token", "op-token")
	wantContains(t, out, "deleted dead letter "+id, "deleted 1 dead letter")

	out = mustLethe(t, "", "dlq", "delete", "--all", "--queue", "orders", "-y", s, "--token", "op-token", "--json")
	if res := decode[[]dlqOutcome](t, out); len(res) != 2 || res[0].Outcome != "deleted" {
		t.Fatalf("delete --all --json = %+v, want 2 deleted", res)
	}
	wantContains(t, mustLethe(t, "", "dlq", "replay", "--all", "--queue", "orders", s, "--token", "user-token"), "no dead letters match")
}

func TestDLQBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"dlq", "replay"}, "missing dead letter ids: usage: lethe dlq replay ID... | --all --queue Q"},
		{[]string{"dlq", "replay", "abc"}, `dead letter id must be a positive whole number (the ID column of ` + "`lethe dlq list`" + `), got "abc"`},
		{[]string{"dlq", "delete", "0"}, "positive whole number"},
		{[]string{"dlq", "replay", "--all"}, "--all needs --queue"},
		{[]string{"dlq", "replay", "1", "--all", "--queue", "q"}, "ids or --all, not both"},
		{[]string{"dlq", "replay", "1", "--queue", "q"}, "with ids, leave them out"},
		{[]string{"dlq", "show"}, "missing dead letter id"},
		{[]string{"dlq", "list", "--limit", "0"}, "--limit must be between 1 and 1000"},
		{[]string{"dlq", "list", "--from", "last week"}, "--from must be an RFC 3339 time"},
	} {
		if _, err := lethe(t, "", tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("lethe %v: %v, want %q", tc.args, err, tc.want)
		}
	}
}
