package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/testkit"
)

// previousVersion is the commit the rolling-upgrade test runs beside the
// current code: the last whose schema was the migration chain the baseline
// replaced. Move it to the newest release once one is cut after it.
const previousVersion = "9290110"

// procBuildAt builds ./cmd/lethe as it was at commit rev, from the
// repository's history, and returns the binary.
func procBuildAt(t *testing.T, rev string) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	archive := exec.Command("git", "-C", root, "archive", "--format=tar", rev)
	tar := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	tar.Stdin = pipe
	var archiveErr bytes.Buffer
	archive.Stderr = &archiveErr
	if err := tar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s: %v: %s (the rolling-upgrade test needs the repository's history: a git clone, not an export)",
			rev, err, archiveErr.String())
	}
	if err := tar.Wait(); err != nil {
		t.Fatalf("extract %s: %v", rev, err)
	}
	bin := filepath.Join(t.TempDir(), "lethe-"+rev)
	ctx, cancel := context.WithTimeout(context.Background(), 2*procBuildTimeout)
	defer cancel()
	began := time.Now()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/lethe")
	build.Dir = src
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/lethe at %s: %v\n%s", rev, err, out)
	}
	t.Logf("built lethe at %s in %v", rev, time.Since(began).Round(time.Millisecond))
	return bin
}

// rollCall sends body (nil: none) and decodes a 2xx answer into out.
func rollCall(t *testing.T, method, url string, body any, out any) int {
	t.Helper()
	status, raw := testkit.Do(t, method, url, "", body)
	if status >= 300 {
		t.Fatalf("%s %s: %d %s", method, url, status, raw)
	}
	if out != nil && status != http.StatusNoContent {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, url, raw, err)
		}
	}
	return status
}

// A rolling upgrade: a replica of the previous version migrates a new
// database and serves it; a replica of this version starts on the same
// database (adopting the previous schema and applying its functions)
// while the old one keeps serving. Both stay ready, the old one starts
// again on the upgraded database, and messages pushed through either are
// delivered and acked through either, each exactly once, with no error in
// either replica's log. Fails when this version changes a function the
// previous one calls, or leaves the old replica unready.
func TestRollingUpgradeFromThePreviousVersion(t *testing.T) {
	t.Parallel()
	oldBin, newBin := procBuildAt(t, previousVersion), procBuildLethe(t)
	dsn := pgtest.NewEmptyDatabase(t)
	old := procNewLethe(t, oldBin, dsn)

	pushed := map[string]bool{}
	pushVia := func(l *procLethe, from, n int) {
		var items []api.PushItem
		for i := from; i < from+n; i++ {
			id := fmt.Sprintf("roll-%03d", i)
			pushed[id] = true
			items = append(items, api.PushItem{Queue: "roll", Partition: fmt.Sprintf("p%d", i%4), TransactionID: id,
				Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
		}
		var res []api.PushResult
		rollCall(t, http.MethodPost, l.URL()+"/api/v1/push", api.PushRequest{Items: items}, &res)
		for _, r := range res {
			if r.Status != "queued" {
				t.Fatalf("push through %s: %+v, want queued", l.bin, r)
			}
		}
	}
	pushVia(old, 0, 40)
	applied := func() (newest int, baseline bool) {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if err := conn.QueryRow(context.Background(), `SELECT max(version) FILTER (WHERE version < 200),
			       count(*) FILTER (WHERE version = 200) > 0 FROM lethe.schema_migrations`).Scan(&newest, &baseline); err != nil {
			t.Fatal(err)
		}
		return newest, baseline
	}
	if newest, baseline := applied(); newest != 157 || baseline {
		t.Fatalf("the previous version migrated to %d (baseline %v), want the replaced chain's 157 without it", newest, baseline)
	}

	upgraded := procNewLethe(t, newBin, dsn)
	if newest, baseline := applied(); newest != 157 || !baseline {
		t.Fatalf("after this version started: chain to %d, baseline %v; want 157 kept and the baseline recorded", newest, baseline)
	}
	for _, l := range []*procLethe{old, upgraded} {
		var ready api.Ready
		if status := rollCall(t, http.MethodGet, l.URL()+"/ready", nil, &ready); status != http.StatusOK {
			t.Fatalf("%s on the upgraded database: /ready %d %+v", filepath.Base(l.bin), status, ready)
		}
	}
	pushVia(upgraded, 40, 40)
	// The old replica starts again on the upgraded database.
	old.kill()
	old.start()
	pushVia(old, 80, 20)

	acked := map[string]int{}
	replicas := []*procLethe{old, upgraded}
	for round := 0; len(acked) < len(pushed) && round < 200; round++ {
		l := replicas[round%2]
		var pop api.PopResponse
		rollCall(t, http.MethodGet, l.URL()+"/api/v1/pop/queue/roll?consumerGroup=g&batch=7", nil, &pop)
		if len(pop.Messages) == 0 {
			continue
		}
		var acks api.AckBatchRequest
		for _, m := range pop.Messages {
			acks.Acknowledgments = append(acks.Acknowledgments, api.AckRequest{TransactionID: m.TransactionID,
				PartitionID: m.PartitionID, LeaseID: m.LeaseID, ConsumerGroup: "g", Status: "completed"})
		}
		var results []api.AckResult
		rollCall(t, http.MethodPost, replicas[(round+1)%2].URL()+"/api/v1/ack/batch", acks, &results)
		for i, r := range results {
			if !r.Success {
				t.Fatalf("ack of %s through the other replica: %+v", pop.Messages[i].TransactionID, r)
			}
			acked[pop.Messages[i].TransactionID]++
		}
	}
	for id := range pushed {
		if acked[id] != 1 {
			t.Errorf("message %s delivered and acked %d times, want once", id, acked[id])
		}
	}
	if len(acked) != len(pushed) {
		t.Errorf("acked %d distinct messages of %d pushed", len(acked), len(pushed))
	}
	for _, l := range []*procLethe{old, upgraded} {
		logText, _ := os.ReadFile(l.logPath)
		for _, line := range strings.Split(string(logText), "\n") {
			if strings.Contains(line, "level=ERROR") {
				t.Errorf("%s logged an error: %s", filepath.Base(l.bin), line)
			}
		}
	}
}
