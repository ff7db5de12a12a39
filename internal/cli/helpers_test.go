package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/testkit"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// serveAt starts a replica on a fake clock at t0 and answers it, the clock
// and the --server flag that points commands at it.
func serveAt(t *testing.T, t0 time.Time) (*testserver.Server, *clock.Fake, string) {
	t.Helper()
	clk := clock.NewFake(t0)
	srv := testserver.Start(t, testserver.Options{Clock: clk})
	return srv, clk, "--server=" + srv.URL
}

// syncBuffer is a bytes.Buffer a running command may write while the test
// reads it.
type syncBuffer = testkit.SyncBuffer

// run is the CLI in-process with its own context, stdin, stdout and
// stderr: what lethe does, for commands that run on (--follow) or write to
// stderr.
func run(ctx context.Context, stdin string, stdout, stderr *syncBuffer, args ...string) error {
	root := NewRoot(stdout, stderr)
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	return root.ExecuteContext(ctx)
}

// letheErr runs a command that ends and returns its stdout, stderr and error.
func letheErr(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut syncBuffer
	err := run(ctx, stdin, &out, &errOut, args...)
	return out.String(), errOut.String(), err
}

// waitFor polls got until it contains want, failing after a deadline.
func waitFor(t *testing.T, what string, got func() string, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(got(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never showed %q; it shows:\n%s", what, want, got())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// newTestClient is a Go client of the test server, for setting up state.
func newTestClient(t *testing.T, url string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// pushTxns pushes one message per transaction id, each {"txn": id}.
func pushTxns(t *testing.T, c *client.Client, queue, partition string, txns ...string) {
	t.Helper()
	items := make([]api.PushItem, len(txns))
	for i, id := range txns {
		items[i] = api.PushItem{Queue: queue, Partition: partition, TransactionID: id, Payload: []byte(`{"txn":"` + id + `"}`)}
	}
	res, err := c.Push(context.Background(), items...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Status != api.StatusQueued {
			t.Fatalf("push %s: %+v", r.TransactionID, r)
		}
	}
}

// lines splits output into its non-empty lines.
func lines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != "" {
			ls = append(ls, l)
		}
	}
	return ls
}
