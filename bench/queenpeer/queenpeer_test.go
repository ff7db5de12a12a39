package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/lethebench"
	"github.com/lethe-mq/lethe/bench/internal/stack"
)

// startLethe runs lethe in this process on a private PostgreSQL.
func startLethe(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	// Not t.TempDir(): its parent is closed to the postgres OS user the
	// server runs as when the tests run as root.
	tmp, err := os.MkdirTemp("", "queenpeer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	pg, err := stack.StartPostgres(ctx, tmp)
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(func() { _ = pg.Stop(context.Background()) })
	if err := pg.EnsureDatabase(ctx, "lethe"); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	l, err := stack.StartLetheInProcess(ctx, pg.DSN("lethe"), filepath.Join(tmp, "lethe-data"), quiet, false, nil)
	if err != nil {
		t.Fatalf("start lethe: %v", err)
	}
	t.Cleanup(l.Stop)
	return l.URL
}

// TestQueenPeerAgainstLethe pushes and drains a small backlog through a
// real lethe and checks every message came back once, in the result and
// in the JSON line.
func TestQueenPeerAgainstLethe(t *testing.T) {
	url := startLethe(t)
	jsonPath := filepath.Join(t.TempDir(), "runs.jsonl")
	const n = 2_550 // not a multiple of the push batch: the last request is short
	o, err := parseOptions([]string{"-url", url, "-system", "lethe", "-n", "2550", "-partitions", "4",
		"-push-clients", "4", "-consumers", "4", "-json", jsonPath, "-limit", "2m"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(t.Context(), o, t.Output())
	if err != nil {
		t.Fatalf("run: %v (result: %+v)", err, res)
	}
	if err := res.appendJSON(jsonPath); err != nil {
		t.Fatal(err)
	}
	t.Log(res.line())
	l := res.Ledger
	if !res.Complete || l.Pushed != n || l.Delivered != n || l.Missing != 0 || l.Duplicates != 0 || l.Unknown != 0 {
		t.Fatalf("ledger %+v; want %d pushed and each delivered once", l, n)
	}
	if !res.Push.Done || !res.PopAck.Done || res.Push.Rate <= 0 || res.PopAck.Rate <= 0 {
		t.Errorf("push %+v, pop+ack %+v: want both done at a rate", res.Push, res.PopAck)
	}
	if least := int64(n / o.popBatch); res.Pops.Pops < least || res.Pops.Pop.Count != int(res.Pops.Pops) {
		t.Errorf("%d pops, %d timed; want at least %d, each timed", res.Pops.Pops, res.Pops.Pop.Count, least)
	}
	var back result
	readOneLine(t, jsonPath, &back)
	if !back.Complete || back.Messages != n || back.Ledger != l || back.System != "lethe" {
		t.Errorf("JSON line %+v does not match the result", back)
	}
}

func readOneLine(t *testing.T, path string, into any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var lines int
	for sc.Scan() {
		lines++
		if err := json.Unmarshal(sc.Bytes(), into); err != nil {
			t.Fatalf("%s line %d: %v", path, lines, err)
		}
	}
	if lines != 1 {
		t.Fatalf("%s has %d lines, want 1", path, lines)
	}
}

// TestLedgerCountsEveryFault checks the ledger catches what the run is
// judged by: a message never acked, one acked twice, an ack of an id
// never pushed.
func TestLedgerCountsEveryFault(t *testing.T) {
	led := newLedger(3)
	led.pushed([]string{"a", "b", "c"})
	led.pushed([]string{"c"}) // a retried push
	led.delivered([]lethebench.Message{{TransactionID: "a"}, {TransactionID: "b"}})
	led.delivered([]lethebench.Message{{TransactionID: "b"}, {TransactionID: "z"}})
	got := led.tally()
	want := tally{Pushed: 3, Delivered: 2, Missing: 1, Duplicates: 1, Unknown: 1}
	if got != want {
		t.Fatalf("tally %+v, want %+v", got, want)
	}
	if got.complete(3) {
		t.Fatal("a tally with a missing message is complete")
	}
	led.delivered([]lethebench.Message{{TransactionID: "c"}})
	if ok := (tally{Pushed: 3, Delivered: 3}).complete(3); !ok {
		t.Fatal("a clean tally is not complete")
	}
}

func TestRunRefusesAServerThatIsNotThere(t *testing.T) {
	o, err := parseOptions([]string{"-url", "http://127.0.0.1:1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if res, err := run(ctx, o, io.Discard); err == nil || res != nil {
		t.Fatalf("run against nothing = %v, %v; want an error and no result", res, err)
	}
}

func TestOptionsRefuseNonsense(t *testing.T) {
	for _, args := range [][]string{{}, {"-url", "localhost:6632"}, {"-url", "http://h", "-n", "0"},
		{"-url", "http://h", "-size", "1"}, {"-url", "http://h", "-limit", "0s"}, {"-url", "http://h", "extra"}} {
		if _, err := parseOptions(args, io.Discard); err == nil {
			t.Errorf("parseOptions(%q) accepted", args)
		}
	}
	o, err := parseOptions([]string{"-url", "http://127.0.0.1:6632/"}, io.Discard)
	if err != nil || o.url != "http://127.0.0.1:6632" || o.system != "127.0.0.1:6632" || o.n != 300_000 || o.partitions != 8 {
		t.Fatalf("defaults: %+v, %v", o, err)
	}
}
