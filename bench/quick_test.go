package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/lethe-mq/lethe/bench/internal/lethebench"
	"github.com/lethe-mq/lethe/bench/internal/profiling"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

// quickOptions is -quick with windows short enough that the lethe
// scenarios of both payload sizes finish in about half a minute.
func quickOptions(t *testing.T, sizes []int, systems ...string) Options {
	t.Helper()
	o := Options{Quick: true, OutDir: t.TempDir(), Systems: systems, Sizes: sizes, LetheMode: "process",
		Args: []string{"-quick"}}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	o.Plan.Warmup, o.Plan.Duration = 100*time.Millisecond, 500*time.Millisecond
	o.Plan.DrainLimit, o.Plan.LatencyDuration, o.Plan.SweepBaseline = time.Second, 500*time.Millisecond, 500*time.Millisecond
	return o
}

// run runs the bench and fails the test on any scenario that did not
// produce a figure.
func run(t *testing.T, o Options) map[string]bool {
	t.Helper()
	out, err := Run(t.Context(), o, t.Output())
	if err != nil {
		t.Fatalf("bench: %v", err)
	}
	for _, f := range out.Failures {
		t.Errorf("scenario failed: %s", f)
	}
	got := map[string]bool{}
	for _, r := range out.Results {
		got[r.Key] = true
	}
	for _, name := range []string{"results.md", "results.json"} {
		if fi, err := os.Stat(filepath.Join(o.OutDir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s was not written: %v", name, err)
		}
	}
	return got
}

func requireKeys(t *testing.T, got map[string]bool, keys []string) {
	t.Helper()
	for _, k := range keys {
		if !got[k] {
			t.Errorf("no result %s", k)
		}
	}
}

// TestQuickSmoke runs every lethe scenario and its ceilings in quick mode
// against a private PostgreSQL and a lethe subprocess. It asserts that each
// produced a figure, not how fast anything was.
func TestQuickSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every lethe scenario for about half a minute; skipped with -short")
	}
	o := quickOptions(t, []int{100, 1024}, "ceiling", "lethe")
	got := run(t, o)
	var want []string
	for _, size := range o.Sizes {
		for _, c := range []string{"segment-ingest", "segment-read", "insert", "insert-latency", "segment-delete", "table-drop", "segment-move"} {
			want = append(want, fmt.Sprintf("ceiling/%s/%d", c, size))
		}
		for _, s := range lethebench.PushShapes(o.Plan.PushPartitions) {
			want = append(want, fmt.Sprintf("lethe/push/b%d/p%d/%d", s.Batch, s.Partitions, size))
		}
		for _, k := range []string{"pop-ack", "pop-ack-wide", "fanout/g5", "fanout/g10", "e2e", "push-latency", "push-alone-latency", "sweep", "memory",
			"tier-drop", "held-move", "held-move-work", "pop-held",
			"encrypt-push/off", "encrypt-push/on", "encrypt-pop-ack/off", "encrypt-pop-ack/on"} {
			want = append(want, fmt.Sprintf("lethe/%s/%d", k, size))
		}
	}
	requireKeys(t, got, want)
	if _, err := os.Stat(filepath.Join(o.OutDir, "throughput-1KiB.png")); err != nil {
		t.Errorf("chart not written: %v", err)
	}
}

// TestQuickProfile runs -quick -profile on the push scenario at one
// partition count, with its ceilings: every window must leave a txt with a
// CPU top and a statement table (lethe's own function in lethe's, the
// ceiling's INSERT in the ceiling's), a CPU profile pprof can read, and
// results.json and results.md the profiles and the push cost.
func TestQuickProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the push scenario and the ceilings with profiles for about half a minute; skipped with -short")
	}
	o := quickOptions(t, []int{100}, "ceiling", "lethe")
	o.Profile, o.Scenarios, o.Plan.PushPartitions = true, []string{"push"}, []int{1}
	o.Plan.Duration = time.Second // the profile's whole second, so it has samples on a busy machine
	run(t, o)
	dir := filepath.Join(o.OutDir, "profiles")
	for name, want := range map[string][]string{
		"push-b100-p1-100B.txt":           {"lethe CPU, top 15 by flat", "lethe heap in use", "PostgreSQL, database lethe", "lethe.append"},
		"push-b1-p1-100B.txt":             {"lethe CPU, top 15 by cum", "PostgreSQL, database lethe", "lethe.append"},
		"ceiling-segment-ingest-100B.txt": {"PostgreSQL, database bench_raw", "INSERT INTO bench_raw.segments"},
	} {
		txt, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("no %s: %v", name, err)
			continue
		}
		for _, w := range want {
			if !strings.Contains(string(txt), w) {
				t.Errorf("%s lacks %q:\n%s", name, w, txt)
			}
		}
		if name == "push-b100-p1-100B.txt" && !strings.Contains(string(txt), "%  "+profiling.OwnPrefix) {
			t.Errorf("%s has no lethe function in its CPU tops:\n%s", name, txt)
		}
	}
	f, err := os.Open(filepath.Join(dir, "push-b100-p1-100B.cpu.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p, err := profile.Parse(f); err != nil || len(p.Sample) == 0 {
		t.Errorf("the raw CPU profile: %v", err)
	}
	checkProfiledResults(t, o.OutDir, "lethe/push/b100/p1/100")
}

// checkProfiledResults reads results.json and results.md: the push of key
// has a profile with its cost beside the ceiling's.
func checkProfiledResults(t *testing.T, dir, key string) {
	t.Helper()
	js, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Results []result.Result }
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	var push *result.Result
	for i := range doc.Results {
		if doc.Results[i].Key == key {
			push = &doc.Results[i]
		}
	}
	if push == nil || push.Profile == nil || push.Profile.Cost == nil {
		t.Fatalf("results.json: %s has no profile with a cost: %+v", key, push)
	}
	p, c := push.Profile, push.Profile.Cost
	if p.CPUSeconds <= 0 || len(p.TopFlat) == 0 || len(p.Statements) == 0 || c.LetheCPUMicrosPerMsg <= 0 ||
		c.PGExecMicrosPerMsg <= 0 || c.CeilingMicrosPerRow <= 0 || len(p.Problems) > 0 {
		t.Errorf("results.json: %s's profile %+v, cost %+v: want CPU, tops, statements and costs, no problems", key, p, c)
	}
	md, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "## Profiles") || !strings.Contains(string(md), "µs a row of 100 messages") {
		t.Errorf("results.md has no Profiles section with the ceiling's cost per row")
	}
}

// TestQuickPeers runs River and NATS JetStream in quick mode, skipping a
// peer that is not installed.
func TestQuickPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and the peers; skipped with -short")
	}
	t.Run("river", func(t *testing.T) {
		got := run(t, quickOptions(t, []int{100}, "river"))
		requireKeys(t, got, []string{"river/push/b1/100", "river/push/b10/100", "river/push/b100/100", "river/consume/100", "river/retention/100"})
	})
	t.Run("nats", func(t *testing.T) {
		if _, err := exec.LookPath("nats-server"); err != nil {
			t.Skip("nats-server is not installed: apt-get install nats-server (bash bench/run.sh installs it)")
		}
		got := run(t, quickOptions(t, []int{100}, "nats"))
		requireKeys(t, got, []string{"nats/push/b1/100", "nats/push/b100/100", "nats/pop-ack/100", "nats/fanout/g5/100", "nats/fanout/g10/100", "nats/retention/100"})
	})
}
