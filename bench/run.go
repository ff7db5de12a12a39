package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/bench/internal/ceiling"
	"github.com/lethe-mq/lethe/bench/internal/lethebench"
	"github.com/lethe-mq/lethe/bench/internal/natsbench"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/profiling"
	"github.com/lethe-mq/lethe/bench/internal/report"
	"github.com/lethe-mq/lethe/bench/internal/result"
	"github.com/lethe-mq/lethe/bench/internal/riverbench"
	"github.com/lethe-mq/lethe/bench/internal/soak"
	"github.com/lethe-mq/lethe/bench/internal/stack"
)

// Outcome is what a run produced.
type Outcome struct {
	Results  []result.Result
	Written  []string
	Failures []string // scenarios that returned an error or measured nothing
	Soak     *soak.Report
}

// defaultOutDir is where a run without -out writes: a folder of its own
// under bench/out/runs, which .gitignore keeps out of the tree, named by
// the run's start (UTC) and mode, so that one run never overwrites
// another's results and no run dirties the checkout. bench/out itself
// holds only the run of record that BENCHMARKS.md quotes.
func defaultOutDir(root string, began time.Time, mode string) string {
	return filepath.Join(root, "bench", "out", "runs", began.UTC().Format("20060102-150405")+"-"+mode)
}

// runner holds what the scenarios share.
type runner struct {
	opts     Options
	out      io.Writer
	tmp      string
	pg       *stack.Postgres
	col      report.Collector
	failures []string
	meta     report.Meta
	prof     *profiling.Profiler // nil without -profile
}

// Run starts the stack, runs the chosen scenarios and writes the report.
func Run(ctx context.Context, opts Options, stderr io.Writer) (*Outcome, error) {
	began := time.Now()
	r := &runner{opts: opts, out: stderr}
	root, err := stack.ModuleRoot(ctx)
	if err != nil {
		return nil, err
	}
	mode := "full"
	switch {
	case opts.Soak > 0:
		mode = "soak"
	case opts.Quick:
		mode = "quick"
	}
	outDir := opts.OutDir
	if outDir == "" {
		outDir = defaultOutDir(root, began, mode)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	fmt.Fprintln(stderr, "results go to", outDir)
	if r.tmp, err = os.MkdirTemp("", "lethe-bench-"); err != nil {
		return nil, err
	}
	defer os.RemoveAll(r.tmp)
	r.meta = report.Meta{
		Started: began.UTC().Format(time.RFC3339), Mode: mode,
		Command: strings.TrimSpace("go run ./bench " + strings.Join(opts.Args, " ")),
		Machine: machine(),
		Versions: map[string]string{
			"Go":    runtime.Version(),
			"lethe": letheRevision(ctx, root),
		},
	}

	switch {
	case opts.Soak > 0:
		fmt.Fprintf(stderr, "soak: %s of steady load, then a drain of at most 2 minutes\n", opts.Soak)
	case opts.Quick:
		fmt.Fprintln(stderr, "quick smoke run: every scenario briefly; the figures are not measurements")
	default:
		fmt.Fprintln(stderr, "full run: about 20 to 25 minutes; every scenario is bounded and stops by itself")
	}
	if opts.DatabaseURL != "" {
		r.pg = stack.UsePostgres(opts.DatabaseURL)
	} else {
		fmt.Fprintln(stderr, "starting a private PostgreSQL")
		var extra map[string]string
		if opts.Profile {
			extra = profiling.ServerSettings()
		}
		if r.pg, err = stack.StartPostgresWith(ctx, r.tmp, extra); err != nil {
			return nil, err
		}
		defer func() {
			stopCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := r.pg.Stop(stopCtx); err != nil {
				fmt.Fprintln(stderr, "stopping the private PostgreSQL:", err)
			}
		}()
	}
	r.meta.Versions["PostgreSQL"] = r.pg.Version(ctx) + " (" + r.pg.Settings(ctx) + ")"
	for _, db := range []string{"lethe", "bench_raw", "river"} {
		if err := r.pg.EnsureDatabase(ctx, db); err != nil {
			return nil, err
		}
	}

	if opts.Profile {
		stop, err := r.startProfiler(ctx, outDir)
		if err != nil {
			return nil, err
		}
		defer stop()
	}

	var lethe *lethebench.Env
	if opts.runs("lethe") {
		l, stop, err := r.startLethe(ctx, outDir)
		if err != nil {
			return nil, err
		}
		defer stop()
		lethe = l
	}
	if opts.Soak > 0 {
		return r.soak(ctx, lethe, outDir, began)
	}
	var natsURL string
	if opts.runs("nats") {
		url, stop, err := r.startNATS(ctx, outDir)
		switch {
		case errors.Is(err, stack.ErrNATSMissing):
			r.meta.Notes = append(r.meta.Notes, "NATS JetStream skipped: "+err.Error())
			fmt.Fprintln(stderr, "skipping NATS:", err)
		case err != nil:
			return nil, err
		default:
			defer stop()
			natsURL = url
		}
	}
	if opts.runs("river") {
		r.meta.Versions["River"] = riverbench.Version() + " (riverpgxv5, same PostgreSQL)"
	}

	for _, size := range opts.Plan.Sizes {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(stderr, "\n=== %s payloads ===\n", payload.Label(size))
		if opts.runs("ceiling") {
			r.ceiling(ctx, size)
		}
		if lethe != nil {
			r.lethe(ctx, lethe, size)
		}
		if opts.runs("river") {
			r.step(ctx, "river "+payload.Label(size), func() error {
				return riverbench.Run(ctx, &riverbench.Env{
					DSN: r.pg.DSN("river"), Out: stderr, Plan: opts.Plan, Sink: &r.col, Settle: r.settle,
				}, size)
			})
		}
		if natsURL != "" {
			r.step(ctx, "nats "+payload.Label(size), func() error {
				return natsbench.Run(ctx, &natsbench.Env{URL: natsURL, Out: stderr, Plan: opts.Plan, Sink: &r.col}, size)
			})
		}
	}

	results := r.col.Results()
	for _, res := range results {
		switch {
		case res.Skipped != "":
			r.failures = append(r.failures, fmt.Sprintf("%s: did not run: %s", res.Key, res.Skipped))
		case res.Count == 0 && res.Value == 0:
			r.failures = append(r.failures, fmt.Sprintf("%s: measured nothing (%d errors: %s)", res.Key, res.Errors, res.FirstError))
		}
	}
	if ctx.Err() != nil {
		r.meta.Notes = append(r.meta.Notes, "interrupted: the figures are partial")
	}
	r.meta.Seconds = time.Since(began).Seconds()
	if r.prof != nil {
		r.prof.Attach(results)
	}
	written, err := report.Write(outDir, r.meta, results, opts.Plan.Sizes)
	return &Outcome{Results: results, Written: written, Failures: r.failures}, err
}

// settle is run before every measured scenario.
func (r *runner) settle(ctx context.Context) {
	if r.opts.Quick {
		return // small data: a checkpoint would cost more than it spares
	}
	if err := r.pg.Checkpoint(ctx); err != nil {
		fmt.Fprintln(r.out, "checkpoint:", err)
	}
}

// step runs one scenario, says how long it took, and records its error
// without stopping the run.
func (r *runner) step(ctx context.Context, name string, f func() error) {
	if ctx.Err() != nil {
		return
	}
	began := time.Now()
	err := f()
	if err == nil {
		fmt.Fprintf(r.out, "--- %s: %.1f s\n", name, time.Since(began).Seconds())
		return
	}
	msg := fmt.Sprintf("%s: %v", name, err)
	fmt.Fprintln(r.out, "FAILED", msg)
	r.failures = append(r.failures, msg)
}

func (r *runner) startLethe(ctx context.Context, outDir string) (*lethebench.Env, func(), error) {
	opts := r.opts
	dsn := r.pg.DSN("lethe")
	if opts.LetheURL != "" {
		dsn = opts.DatabaseURL
	}
	var l *stack.Lethe
	var err error
	dataDir := filepath.Join(r.tmp, "lethe-data")
	switch {
	case opts.LetheURL != "":
		l, err = stack.UseLethe(ctx, opts.LetheURL)
		r.meta.LetheMemory = "not measured: lethe ran elsewhere (-lethe-url)"
	case opts.LetheMode == "inprocess":
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		l, err = stack.StartLetheInProcess(ctx, dsn, dataDir, log, opts.Quick, r.letheClock())
		r.meta.LetheMemory = "in-process: the peak RSS includes the load generator"
	default:
		fmt.Fprintln(r.out, "building lethe")
		var bin string
		if bin, err = stack.BuildLethe(ctx, r.tmp); err != nil {
			return nil, nil, err
		}
		l, err = stack.StartLetheProcessWith(ctx, bin, dsn, dataDir, filepath.Join(outDir, "lethe.log"), opts.Quick, opts.Profile)
		r.meta.LetheMemory = "subprocess (go build ./cmd/lethe): VmHWM of its /proc/PID/status, reset before each scenario"
	}
	if err != nil {
		return nil, nil, err
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		l.Stop()
		return nil, nil, fmt.Errorf("connect to lethe's database: %w", err)
	}
	env := &lethebench.Env{
		URL: l.URL, Pool: pool, PID: l.PID, Out: r.out, Plan: opts.Plan,
		Tag: strconv.FormatInt(time.Now().Unix()%100000, 36), Sink: &r.col, Settle: r.settle,
	}
	if l.PprofURL != "" {
		env.Profile = r.prof.Lethe("lethe", l.PprofURL, func() (int64, error) { return stack.PeakRSS(l.PID) })
	}
	if opts.LetheMode == "process" && opts.LetheURL == "" {
		for k, v := range stack.LetheEnv(opts.Quick) {
			if os.Getenv(k) == "" {
				r.meta.Notes = append(r.meta.Notes, fmt.Sprintf("lethe ran with %s=%s", k, v))
			}
		}
	}
	return env, func() { pool.Close(); l.Stop() }, nil
}

// startProfiler prepares -profile's recorder: outDir/profiles and
// pg_stat_statements. PostgreSQL without the extension loaded (an external
// one) leaves the statement tables out, with a note saying so.
func (r *runner) startProfiler(ctx context.Context, outDir string) (func(), error) {
	p, err := profiling.New(ctx, outDir, r.pg.DSN("postgres"))
	if err != nil {
		return nil, fmt.Errorf("-profile: %w", err)
	}
	r.prof = p
	r.meta.Notes = append(r.meta.Notes, "profiled (-profile): lethe's CPU profile and pg_stat_statements (track = all) ran during every "+
		"measured window, so the figures carry their overhead; the profiles are in "+profiling.Dir+"/")
	if p.Problem() != "" {
		r.meta.Notes = append(r.meta.Notes, "-profile: no PostgreSQL statements: "+p.Problem())
		fmt.Fprintln(r.out, "-profile: no PostgreSQL statements:", p.Problem())
	}
	return p.Close, nil
}

func (r *runner) startNATS(ctx context.Context, outDir string) (string, func(), error) {
	if r.opts.NATSURL != "" {
		r.meta.Versions["nats-server"] = "external (-nats-url)"
		r.meta.Versions["nats.go"] = natsbench.ClientVersion()
		return r.opts.NATSURL, func() {}, nil
	}
	n, err := stack.StartNATS(ctx, r.tmp, filepath.Join(outDir, "nats.log"))
	if err != nil {
		return "", nil, err
	}
	r.meta.Versions["nats-server"] = n.Version + " (JetStream, file storage, default sync policy)"
	r.meta.Versions["nats.go"] = natsbench.ClientVersion()
	return n.URL, n.Stop, nil
}

func (r *runner) ceiling(ctx context.Context, size int) {
	env := &ceiling.Env{DSN: r.pg.DSN("bench_raw"), Out: r.out, Plan: r.opts.Plan, Sink: &r.col, Settle: r.settle,
		Profile: r.prof.Postgres("bench_raw")}
	label := "ceiling " + payload.Label(size)
	// Each ceiling runs when a lethe scenario compared with it was chosen
	// (or lethe is not run at all); segment read reads what ingest wrote.
	for _, s := range []struct {
		name      string
		f         func(context.Context, *ceiling.Env, int) error
		scenarios []string
	}{
		{"tables", func(ctx context.Context, env *ceiling.Env, _ int) error { return ceiling.Prepare(ctx, env) }, nil},
		{"segment ingest", ceiling.IngestSegments, []string{"push", "pop-ack", "held", "encryption"}},
		{"segment read", ceiling.ReadSegments, []string{"pop-ack", "held", "encryption"}},
		{"segment ingest, rows of 10", ceiling.IngestSmallSegments, []string{"push"}},
		{"INSERT per message", ceiling.InsertPerMessage, []string{"push"}},
		{"INSERT latency", ceiling.InsertLatency, []string{"latency"}},
		{"end-to-end latency", ceiling.E2ELatency, []string{"latency"}},
		{"segment delete", ceiling.DeleteSegments, []string{"sweep"}},
		{"table drop", ceiling.DropTable, []string{"tiers"}},
		{"segment move", ceiling.MoveSegments, []string{"held"}},
	} {
		if s.scenarios != nil && !r.opts.ceilingFor(s.scenarios) {
			continue
		}
		r.step(ctx, label+" "+s.name, func() error { return s.f(ctx, env, size) })
	}
}

func (r *runner) lethe(ctx context.Context, env *lethebench.Env, size int) {
	label := "lethe " + payload.Label(size)
	run := func(scenario, name string, f func() error) {
		if !r.opts.runsScenario(scenario) {
			return
		}
		r.step(ctx, label+" "+name, func() error {
			if err := lethebench.Reset(ctx, env); err != nil {
				return err
			}
			return f()
		})
	}
	for _, s := range lethebench.PushShapes(r.opts.Plan.PushPartitions) {
		run("push", fmt.Sprintf("push b%d p%d", s.Batch, s.Partitions), func() error { return lethebench.Push(ctx, env, s, size) })
	}
	run("pop-ack", "pop+ack and fan-out", func() error { return lethebench.Consume(ctx, env, size) })
	run("latency", "push latency alone", func() error { return lethebench.PushLatency(ctx, env, size) })
	run("latency", "latency", func() error { return lethebench.Latency(ctx, env, size) })
	run("sweep", "sweep", func() error { return lethebench.Sweep(ctx, env, size) })
	run("tiers", "tier drop", func() error { return lethebench.TierDrop(ctx, env, size) })
	run("held", "held move and pop", func() error { return lethebench.HeldMove(ctx, env, size) })
	run("encryption", "encryption on and off", func() error { return lethebench.Encryption(ctx, env, size) })
	r.step(ctx, label+" reset", func() error { return lethebench.Reset(ctx, env) })
	r.memory(env, size)
}

// memory adds the highest peak RSS lethe reached in this size's scenarios.
func (r *runner) memory(env *lethebench.Env, size int) {
	if env.PID == 0 {
		return
	}
	var top result.Result
	for _, res := range r.col.Results() {
		if res.System == result.Lethe && res.Payload == size && res.PeakRSSMiB > top.PeakRSSMiB {
			top = res
		}
	}
	if top.PeakRSSMiB == 0 {
		return
	}
	now, _ := stack.RSS(env.PID)
	r.col.Add(result.Result{
		Key: fmt.Sprintf("lethe/memory/%d", size), System: result.Lethe, Scenario: "memory",
		Label: "peak RSS of lethe (highest scenario)", Payload: size, Unit: "MiB", Value: top.PeakRSSMiB, Count: 1,
		PeakRSSMiB: top.PeakRSSMiB,
		Notes:      fmt.Sprintf("in %q; %.0f MiB resident after the scenarios", top.Label, float64(now)/(1<<20)),
	})
}
