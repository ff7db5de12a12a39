package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/plan"
	"github.com/lethe-mq/lethe/bench/internal/soak"
)

// Systems the bench can measure, in the order they run.
var allSystems = []string{"ceiling", "lethe", "river", "nats"}

// letheScenarios are the lethe scenarios -scenarios can pick, in the order
// they run.
var letheScenarios = []string{"push", "pop-ack", "latency", "sweep", "tiers", "held", "encryption"}

// Options is the command line.
type Options struct {
	Quick       bool
	OutDir      string
	Systems     []string
	Scenarios   []string // lethe scenarios to run (all by default)
	Sizes       []int
	Duration    time.Duration // overrides the plan's throughput window
	Warmup      time.Duration
	LatencyRate int // overrides the plan's offered load of the latency runs
	SweepFrames int
	LetheMode   string // "process", "inprocess"
	LetheURL    string // an external lethe: no build, no memory figure
	DatabaseURL string // an external PostgreSQL instead of a private one
	NATSURL     string // an external nats-server
	Args        []string
	// Profile records, for every measured window, lethe's CPU and heap
	// profiles and PostgreSQL's costliest statements (profiles/ in the
	// output folder).
	Profile bool

	Plan plan.Plan

	// Soak, when positive, runs only the soak (a steady mixed load) for
	// that long; SoakSpec is built from the -soak-* flags.
	Soak      time.Duration
	soakFlags soakFlags
	SoakSpec  soak.Spec
}

func parseFlags(args []string) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.BoolVar(&o.Quick, "quick", false, "smoke run: every scenario for a second or two on small backlogs; figures are not measurements")
	fs.StringVar(&o.OutDir, "out", "", "folder for results.md, results.json and the charts "+
		"(default bench/out/runs/<start, UTC>-<mode> in the module, a folder git ignores)")
	only := fs.String("only", strings.Join(allSystems, ","), "systems to run, comma separated: "+strings.Join(allSystems, ", "))
	scenarios := fs.String("scenarios", strings.Join(letheScenarios, ","),
		"lethe scenarios to run, comma separated: "+strings.Join(letheScenarios, ", ")+
			" (for example -only lethe -scenarios latency: end-to-end latency at 1,000 msg/s alone)")
	sizes := fs.String("sizes", "100,1024", "payload sizes in bytes, comma separated")
	fs.DurationVar(&o.Duration, "duration", 0, "measured window of each throughput scenario (default 10s, 1s with -quick)")
	fs.DurationVar(&o.Warmup, "warmup", 0, "unmeasured warmup before each window (default 1.5s, 200ms with -quick)")
	fs.IntVar(&o.LatencyRate, "latency-rate", 0, "offered load of the latency runs in msg/s (default 1000, 200 with -quick)")
	fs.IntVar(&o.SweepFrames, "sweep-frames", 0, "frames in the retention sweep's backlog (default 5000000, 100000 with -quick)")
	fs.StringVar(&o.LetheMode, "lethe", "process", "how to run lethe: process (go build, run as a subprocess: its own memory) or inprocess (app.Start)")
	fs.StringVar(&o.LetheURL, "lethe-url", "", "measure a lethe already running at this URL (needs -database-url of its database)")
	fs.StringVar(&o.DatabaseURL, "database-url", "", "use this PostgreSQL (a superuser connection) instead of starting a private one")
	fs.StringVar(&o.NATSURL, "nats-url", "", "use this nats-server (JetStream on) instead of starting one")
	fs.BoolVar(&o.Profile, "profile", false, "profile every measured window: lethe's CPU (top 15 by flat and by cum) and heap, "+
		"PostgreSQL's top statements (pg_stat_statements), into profiles/ in the output folder and a Profiles section of results.md; "+
		"the figures then carry the profiler's overhead")
	o.soakFlags.register(fs, &o.Soak)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.Args = args
	o.Systems = splitList(*only)
	o.Scenarios = splitList(*scenarios)
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return o, fmt.Errorf("-sizes: %q is not a number of bytes", s)
		}
		o.Sizes = append(o.Sizes, n)
	}
	return o, o.Validate()
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Validate checks the flags and builds the plan.
func (o *Options) Validate() error {
	for _, s := range o.Systems {
		if !slices.Contains(allSystems, s) {
			return fmt.Errorf("-only: unknown system %q; choose from %s", s, strings.Join(allSystems, ", "))
		}
	}
	if len(o.Systems) == 0 {
		return errors.New("-only: name at least one system")
	}
	for _, s := range o.Scenarios {
		if !slices.Contains(letheScenarios, s) {
			return fmt.Errorf("-scenarios: unknown lethe scenario %q; choose from %s", s, strings.Join(letheScenarios, ", "))
		}
	}
	for _, n := range o.Sizes {
		if n < 64 || n > 1<<20 {
			return fmt.Errorf("-sizes: %d bytes is outside 64 B to 1 MiB", n)
		}
	}
	if o.LetheMode != "process" && o.LetheMode != "inprocess" {
		return fmt.Errorf("-lethe must be process or inprocess, got %q", o.LetheMode)
	}
	if o.LetheURL != "" && o.DatabaseURL == "" {
		return errors.New("-lethe-url needs -database-url: backlogs are written straight into lethe's database")
	}
	if o.Profile && (o.LetheMode != "process" || o.LetheURL != "" || o.Soak > 0) {
		return errors.New("-profile needs lethe as the bench's own subprocess (-lethe process, no -lethe-url) and no -soak: " +
			"its CPU profile comes from the pprof address the bench gives it")
	}
	o.Plan = plan.Full()
	if o.Quick {
		o.Plan = plan.Quick()
	}
	o.Plan.Sizes = o.Sizes
	if o.Duration > 0 {
		o.Plan.Duration = o.Duration
	}
	if o.Warmup > 0 {
		o.Plan.Warmup = o.Warmup
	}
	if o.LatencyRate < 0 || o.LatencyRate > 100_000 {
		return fmt.Errorf("-latency-rate: %d msg/s is outside 1 to 100,000", o.LatencyRate)
	}
	if o.LatencyRate > 0 {
		o.Plan.LatencyRate = o.LatencyRate
	}
	if o.SweepFrames > 0 {
		o.Plan.SweepBacklog = o.SweepFrames
	}
	if o.Soak > 0 {
		o.Systems = []string{"lethe"}
		o.SoakSpec = o.soakFlags.spec(o.Soak)
		return o.SoakSpec.Validate()
	}
	return nil
}

func (o *Options) runs(system string) bool { return slices.Contains(o.Systems, system) }

// runsScenario says whether a lethe scenario was chosen (every one when
// -scenarios was not given).
func (o *Options) runsScenario(name string) bool {
	return len(o.Scenarios) == 0 || slices.Contains(o.Scenarios, name)
}

// ceilingFor says whether a ceiling compared with any of scenarios is
// needed: one of them was chosen, or lethe does not run (the ceilings
// alone are then the point).
func (o *Options) ceilingFor(scenarios []string) bool {
	if !o.runs("lethe") {
		return true
	}
	for _, s := range scenarios {
		if o.runsScenario(s) {
			return true
		}
	}
	return false
}
