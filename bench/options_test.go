package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/stack"
)

// -scenarios picks lethe scenarios by name and refuses unknown ones with
// the list to choose from.
func TestScenariosFlag(t *testing.T) {
	t.Parallel()
	o, err := parseFlags([]string{"-only", "lethe", "-scenarios", "latency, pop-ack"})
	if err != nil {
		t.Fatal(err)
	}
	if !o.runsScenario("latency") || !o.runsScenario("pop-ack") || o.runsScenario("push") {
		t.Errorf("-scenarios latency,pop-ack chose %v", o.Scenarios)
	}
	all, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range letheScenarios {
		if !all.runsScenario(s) {
			t.Errorf("without -scenarios, %s does not run", s)
		}
	}
	if _, err := parseFlags([]string{"-scenarios", "latencyy"}); err == nil || !strings.Contains(err.Error(), "latency, sweep") {
		t.Errorf("-scenarios latencyy: %v, want an error listing the scenarios", err)
	}
}

// -profile needs lethe as the bench's own subprocess: its CPU profile comes
// from the pprof address the bench gives it.
func TestProfileFlag(t *testing.T) {
	t.Parallel()
	o, err := parseFlags([]string{"-profile", "-quick"})
	if err != nil || !o.Profile {
		t.Fatalf("-profile -quick: %v, profile %v", err, o.Profile)
	}
	for _, args := range [][]string{
		{"-profile", "-lethe", "inprocess"},
		{"-profile", "-lethe-url", "http://127.0.0.1:1", "-database-url", "postgres://x"},
		{"-profile", "-soak", "1m"},
	} {
		if _, err := parseFlags(args); err == nil || !strings.Contains(err.Error(), "-profile needs lethe as the bench's own subprocess") {
			t.Errorf("%v: %v, want -profile refused", args, err)
		}
	}
}

// A ceiling runs only when a chosen lethe scenario is compared with it, or
// when lethe does not run at all.
func TestCeilingFor(t *testing.T) {
	t.Parallel()
	o, err := parseFlags([]string{"-only", "ceiling,lethe", "-scenarios", "push"})
	if err != nil {
		t.Fatal(err)
	}
	if !o.ceilingFor([]string{"push", "held"}) || o.ceilingFor([]string{"sweep"}) {
		t.Errorf("-scenarios push: ceilingFor(push,held) %v, ceilingFor(sweep) %v; want true, false",
			o.ceilingFor([]string{"push", "held"}), o.ceilingFor([]string{"sweep"}))
	}
	alone, err := parseFlags([]string{"-only", "ceiling", "-scenarios", "push"})
	if err != nil {
		t.Fatal(err)
	}
	if !alone.ceilingFor([]string{"sweep"}) {
		t.Error("-only ceiling skipped the sweep's ceiling")
	}
}

// -latency-rate sets the latency runs' offered load and refuses a rate
// that is not one.
func TestLatencyRateFlag(t *testing.T) {
	t.Parallel()
	o, err := parseFlags([]string{"-latency-rate", "250"})
	if err != nil || o.Plan.LatencyRate != 250 {
		t.Fatalf("-latency-rate 250: %v, plan rate %d", err, o.Plan.LatencyRate)
	}
	if o, err := parseFlags(nil); err != nil || o.Plan.LatencyRate != 1000 {
		t.Fatalf("no -latency-rate: %v, plan rate %d, want the full plan's 1000", err, o.Plan.LatencyRate)
	}
	if _, err := parseFlags([]string{"-latency-rate", "-5"}); err == nil || !strings.Contains(err.Error(), "-latency-rate") {
		t.Errorf("-latency-rate -5: %v, want it refused", err)
	}
}

// Without -out a run writes into a folder of its own under bench/out/runs,
// which git ignores: a run neither dirties the checkout nor overwrites
// another run's results (bench/out keeps only the run of record).
func TestDefaultOutDirIsIgnoredByGit(t *testing.T) {
	root, err := stack.ModuleRoot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	began := time.Date(2026, 12, 2, 23, 21, 1, 0, time.FixedZone("UTC+2", 2*3600))
	dir := defaultOutDir(root, began, "full")
	if want := filepath.Join(root, "bench", "out", "runs", "20261202-212101-full"); dir != want {
		t.Fatalf("defaultOutDir = %s, want %s (the start in UTC, then the mode)", dir, want)
	}
	if other := defaultOutDir(root, began.Add(time.Second), "full"); other == dir {
		t.Errorf("two runs a second apart share %s", dir)
	}
	rel, err := filepath.Rel(root, filepath.Join(dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	// check-ignore answers 0 when the path is ignored, 1 when it is not.
	out, err := exec.Command("git", "-C", root, "check-ignore", "-v", rel).CombinedOutput()
	if err != nil {
		t.Fatalf("git check-ignore %s: %v (%s): a default run would write into the tracked tree", rel, err, strings.TrimSpace(string(out)))
	}
}
