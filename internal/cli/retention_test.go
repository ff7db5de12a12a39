package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/retention"
)

func TestRetentionStatusAndHistory(t *testing.T) {
	t.Parallel()
	srv, clk, s := serveAt(t, time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))

	mustLethe(t, "", "queue", "configure", "ticks", s, "--max-wait-time-seconds", "60")
	mustLethe(t, "1\n2\n3\n", "push", "ticks", s)
	mustLethe(t, "", "pop", "ticks", s, "--group", "dash", "--batch", "2")
	clk.Advance(2 * time.Minute)

	out := mustLethe(t, "", "retention", "status", "ticks", s)
	wantContains(t, out, "queue ticks", "max wait 60s (evicts unread messages)",
		"next cycle", "max wait 3 messages in 1 segments")
	// Every queue: then the database's storage, the WAL included (the
	// test server's role is a superuser, so it may list the WAL folder).
	out = mustLethe(t, "", "retention", "status", s)
	wantContains(t, out, "queue ticks", "storage     database ", "largest   lethe.", "  WAL       ", "% of database and WAL together (max_wal_size ")
	st := decode[retention.Status](t, mustLethe(t, "", "retention", "status", s, "--json"))
	if len(st.Queues) != 1 || st.Queues[0].NextCycle.MaxWait.Frames != 3 {
		t.Fatalf("status --json = %+v, want the dry run of 3 evicted messages", st)
	}

	if res, err := srv.Retention.RunCycle(context.Background()); err != nil || res.MaxWait.Frames != 3 {
		t.Fatalf("cycle: %+v, %v", res, err)
	}
	out = mustLethe(t, "", "retention", "history", "ticks", s, "--lost-only")
	wantContains(t, out, "ticks/Default  max_wait  3 messages in 1 segments", "group dash lost 3 unread (offsets 0..2, 2 of them leased)")

	if _, err := lethe(t, "", "retention", "status", "nope", s); err == nil {
		t.Fatal("status of an unknown queue succeeded")
	}
	if _, err := lethe(t, "", "retention", "history", s, "--rule", "ttl"); err == nil {
		t.Fatal("history --rule ttl succeeded")
	}
}

// lethe pop says on stderr what the group lost unread, once.
func TestPopTellsTheGap(t *testing.T) {
	t.Parallel()
	srv, clk, s := serveAt(t, time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))

	mustLethe(t, "", "queue", "configure", "ticks", s, "--max-wait-time-seconds", "60")
	mustLethe(t, "1\n2\n3\n", "push", "ticks", s)
	mustLethe(t, "", "pop", "ticks", s, "--group", "dash", "--auto-ack")
	clk.Advance(2 * time.Minute)
	if res, err := srv.Retention.RunCycle(context.Background()); err != nil || res.MaxWait.Frames != 3 {
		t.Fatalf("cycle: %+v, %v", res, err)
	}
	mustLethe(t, "4\n", "push", "ticks", s)
	out, errOut, err := letheErr(t, "", "pop", "ticks", s, "--group", "dash", "--auto-ack")
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, out, "4")
	wantContains(t, errOut, "lost: 2 message(s) at offsets 1..2 of ticks/Default were deleted before this group consumed them, by maxWaitTimeSeconds")
	mustLethe(t, "5\n", "push", "ticks", s)
	if _, errOut, err := letheErr(t, "", "pop", "ticks", s, "--group", "dash", "--auto-ack"); err != nil || strings.Contains(errOut, "lost:") {
		t.Fatalf("second pop: %v, stderr %q; want the gap told once", err, errOut)
	}
}

// lethe retention hold, holds and release: a held queue loses nothing to
// its maxWaitTimeSeconds until released.
func TestRetentionHoldCommands(t *testing.T) {
	t.Parallel()
	srv, clk, s := serveAt(t, time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))

	mustLethe(t, "", "queue", "configure", "ticks", s, "--max-wait-time-seconds", "60")
	mustLethe(t, "1\n2\n", "push", "ticks", s)
	if _, err := lethe(t, "", "retention", "hold", "ticks", s); err == nil || !strings.Contains(err.Error(), "--reason is required") {
		t.Fatalf("hold without a reason: %v", err)
	}
	wantContains(t, mustLethe(t, "", "retention", "hold", "ticks", s, "--reason", "case 17"), "hold 1 placed on ticks")
	wantContains(t, mustLethe(t, "", "retention", "holds", s), "ID", "ticks", "active", "case 17")
	wantContains(t, mustLethe(t, "", "retention", "status", "ticks", s), "held        by hold [1]: nothing of the queue is deleted")
	clk.Advance(5 * time.Minute)
	if res, err := srv.Retention.RunCycle(context.Background()); err != nil || res.MaxWait.Frames != 0 {
		t.Fatalf("cycle under the hold: %+v, %v; want nothing evicted", res.MaxWait, err)
	}
	// Five minutes old against a 60 s window, kept by the hold: the status
	// says so, not "0s past its window".
	held := mustLethe(t, "", "retention", "status", "ticks", s)
	wantContains(t, held, "5m0s old; kept by the hold, no rule's window applies")
	if strings.Contains(held, "past its window") {
		t.Errorf("retention status under a hold:\n%s\nwant no window lag (no rule has a window while held)", held)
	}
	wantContains(t, mustLethe(t, "", "retention", "release", "1", s), "hold 1 on ticks released")
	wantContains(t, mustLethe(t, "", "retention", "holds", s), "no retention holds")
	wantContains(t, mustLethe(t, "", "retention", "holds", "ticks", s, "--released"), "released")
	if res, err := srv.Retention.RunCycle(context.Background()); err != nil || res.MaxWait.Frames != 2 {
		t.Fatalf("cycle after the release: %+v, %v; want both evicted", res.MaxWait, err)
	}
	if _, err := lethe(t, "", "retention", "release", "x", s); err == nil || !strings.Contains(err.Error(), "positive whole number") {
		t.Fatalf("release x: %v", err)
	}
}
