package cli

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/testserver"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "queues.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// validate refuses 5d with its line number and the allowed values, offline.
func TestValidateRefusesFiveDaysWithItsLine(t *testing.T) {
	t.Parallel()
	f := writeFile(t, "queues:\n  orders:\n    leaseTime: 60\n    retentionTier: 5d\n")
	_, err := lethe(t, "", "validate", f)
	if err == nil || !strings.Contains(err.Error(), f+":4: ") || !strings.Contains(err.Error(), "1w, 3w, 7w (or 7d, 21d, 49d) or forever") {
		t.Fatalf("validate of 5d = %v; want line 4 and the allowed values", err)
	}
	good := writeFile(t, "queues:\n  orders:\n    retentionTier: 7d\n")
	wantContains(t, mustLethe(t, "", "validate", good), "1 queues, no problem")
}

// apply shows the plan, creates and changes queues, and says what waits
// for confirmation; retention confirm applies it with its progress, and
// the retention views show the partitions and the bounds.
func TestApplyConfirmAndViews(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{Clock: clock.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)),
		Config: func(c *config.Server) { c.TestClock = true }})
	f := writeFile(t, "queues:\n  orders:\n    retentionTier: forever\n    leaseTime: 60\n")
	out := mustLethe(t, "", "apply", f, "--server", srv.URL)
	wantContains(t, out, "orders: create with")
	mustLethe(t, `{"n":1}`, "push", "orders", "--server", srv.URL)

	shorter := writeFile(t, "queues:\n  orders:\n    retentionTier: 7d\n    leaseTime: 60\n")
	out = mustLethe(t, "", "apply", shorter, "--dry-run", "--server", srv.URL)
	wantContains(t, out, "retentionTier forever -> 7d")
	out = mustLethe(t, "", "apply", shorter, "--server", srv.URL)
	wantContains(t, out, "forever -> 1w WAITS FOR CONFIRMATION", "move 1", "lethe retention confirm orders")

	out = mustLethe(t, "", "retention", "--server", srv.URL)
	wantContains(t, out, "segments_forever_p203001", "orders: forever -> 1w awaiting_confirm")
	out = mustLethe(t, "", "retention", "explain", "orders", "--server", srv.URL)
	wantContains(t, out, "tier forever", "WAITS FOR CONFIRMATION")

	// confirm follows the change on stderr until a retention cycle settles it.
	type result struct {
		out, progress string
		err           error
	}
	done := make(chan result, 1)
	go func() {
		var out, errOut bytes.Buffer
		root := NewRoot(&out, &errOut)
		root.SetArgs([]string{"retention", "confirm", "orders", "--server", srv.URL})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := root.ExecuteContext(ctx)
		done <- result{out.String(), errOut.String(), err}
	}()
	var res result
	for waiting := true; waiting; {
		runRetention(t, srv.URL)
		select {
		case res = <-done:
			waiting = false
		case <-time.After(200 * time.Millisecond):
		}
	}
	if res.err != nil {
		t.Fatalf("retention confirm: %v\n%s", res.err, res.out)
	}
	wantContains(t, res.out, "forever -> 1w confirmed: deleting 0 messages", "orders: the change is done")
	wantContains(t, res.progress, "settling orders: 1/1 (100%)")
	if _, err := lethe(t, "", "retention", "confirm", "orders", "--no-wait", "--server", srv.URL); err == nil ||
		!strings.Contains(err.Error(), "no retention change awaits confirmation") {
		t.Fatalf("a second confirm = %v", err)
	}
}

// runRetention runs one full retention cycle over the test route.
func runRetention(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Post(url+"/api/v1/test/retention/run", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("retention run answered %d", resp.StatusCode)
	}
}
