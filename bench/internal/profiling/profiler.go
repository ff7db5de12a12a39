// Package profiling records, for each measured window of a -profile run,
// where the time went: lethe's CPU profile and heap (from the pprof server
// lethe runs on LETHE_PPROF_ADDR) and PostgreSQL's costliest statements
// (pg_stat_statements). Each window leaves profiles/<name>.txt (the top
// tables) beside the raw profiles, and a compact summary its result carries
// into results.md and results.json.
package profiling

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/payload"
)

// Dir is the folder of the out folder the profiles go to.
const Dir = "profiles"

// Profiler records the windows of one run.
type Profiler struct {
	outDir    string
	stmts     *statements // nil when pg_stat_statements could not be read
	pgProblem string
	client    *http.Client

	mu    sync.Mutex
	found map[string]*record // by result key
}

// New prepares outDir/profiles (removing the profiles an earlier run left
// there) and pg_stat_statements through maintenanceDSN, a superuser
// connection. PostgreSQL that cannot give statistics is not fatal: the
// windows then record lethe only, and Problem says why.
func New(ctx context.Context, outDir, maintenanceDSN string) (*Profiler, error) {
	dir := filepath.Join(outDir, Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, pattern := range []string{"*.pprof", "*.txt"} {
		old, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				return nil, fmt.Errorf("remove the previous run's %s: %w", f, err)
			}
		}
	}
	p := &Profiler{outDir: outDir, client: &http.Client{}, found: map[string]*record{}}
	stmts, err := openStatements(ctx, maintenanceDSN)
	if err != nil {
		p.pgProblem = err.Error()
	}
	p.stmts = stmts
	return p, nil
}

// Problem says why PostgreSQL's side is missing, or is "".
func (p *Profiler) Problem() string { return p.pgProblem }

// Close releases the statistics connection.
func (p *Profiler) Close() {
	if p.stmts != nil {
		p.stmts.close()
	}
}

// Scope is what the windows of one system record: the statements of its
// database and, for lethe, its CPU, heap and peak RSS.
type Scope struct {
	p        *Profiler
	database string
	pprofURL string // lethe's pprof server; "" for the ceiling
	peakRSS  func() (int64, error)
}

// A nil Profiler (no -profile) gives nil scopes, which record nothing.

// Lethe is the scope of lethe's windows: lethe serves pprof at pprofURL
// (http://127.0.0.1:port) and runs on database; peakRSS reads its peak
// resident memory since the scenario began (nil: not known).
func (p *Profiler) Lethe(database, pprofURL string, peakRSS func() (int64, error)) *Scope {
	if p == nil {
		return nil
	}
	return &Scope{p: p, database: database, pprofURL: strings.TrimRight(pprofURL, "/"), peakRSS: peakRSS}
}

// Postgres is the scope of windows with no lethe in them (the ceiling's).
func (p *Profiler) Postgres(database string) *Scope {
	if p == nil {
		return nil
	}
	return &Scope{p: p, database: database}
}

// Window starts recording the window of the result named key, expected to
// last about expected (0: unknown), and returns what ends it: call it once
// the window's load has stopped (again: no effect). A nil Scope (no
// -profile) records nothing.
func (s *Scope) Window(ctx context.Context, key string, expected time.Duration) (end func()) {
	if s == nil {
		return func() {}
	}
	rec := &record{key: key, name: FileName(key), database: s.database, pgOn: s.p.stmts != nil}
	if s.p.stmts == nil {
		rec.problem(errors.New(s.p.pgProblem))
	} else if err := s.p.stmts.reset(ctx); err != nil {
		rec.problem(err)
		rec.pgOn = false
	}
	var cpu *cpuCapture
	if s.pprofURL != "" {
		cpu = startCPU(ctx, s.p.client, s.pprofURL, expected)
	}
	return sync.OnceFunc(func() { s.end(ctx, rec, cpu) })
}

// WindowFrom is Window opened at the time at (the end of a warmup the
// caller does not wait for itself); what it returns waits for the window to
// have opened before ending it.
func (s *Scope) WindowFrom(ctx context.Context, key string, at time.Time, expected time.Duration) (end func()) {
	if s == nil {
		return func() {}
	}
	opened := make(chan func(), 1)
	go func() {
		t := time.NewTimer(time.Until(at))
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		opened <- s.Window(ctx, key, expected)
	}()
	return sync.OnceFunc(func() { (<-opened)() })
}

// end waits for the window's profiles, reads the statements and writes
// the files.
func (s *Scope) end(ctx context.Context, rec *record, cpu *cpuCapture) {
	if cpu != nil {
		s.endLethe(ctx, rec, cpu)
	}
	if rec.pgOn {
		if st, err := s.p.stmts.top(ctx, s.database, topStatements); err != nil {
			rec.problem(err)
		} else {
			rec.pg = &st
		}
	}
	if err := s.p.write(rec); err != nil {
		rec.problem(err)
	}
	s.p.mu.Lock()
	s.p.found[rec.key] = rec
	s.p.mu.Unlock()
}

// How long each table of a txt is.
const (
	topCPU        = 15
	topOwn        = 10
	topHeap       = 10
	topStatements = 8
)

// FileName is the base name of a window's files: the result's key without
// "lethe/", its payload as a size ("lethe/push/b100/p1/1024" is
// "push-b100-p1-1KiB").
func FileName(key string) string {
	parts := strings.Split(strings.TrimPrefix(key, "lethe/"), "/")
	if n := len(parts) - 1; n > 0 {
		var size int
		if _, err := fmt.Sscanf(parts[n], "%d", &size); err == nil && fmt.Sprint(size) == parts[n] {
			parts[n] = strings.ReplaceAll(payload.Label(size), " ", "")
		}
	}
	return strings.Join(parts, "-")
}

// write puts the raw profiles and the txt in the profiles folder.
func (p *Profiler) write(rec *record) error {
	dir := filepath.Join(p.outDir, Dir)
	for suffix, raw := range map[string][]byte{".cpu.pprof": rec.cpuRaw, ".heap.pprof": rec.heapRaw} {
		if raw == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, rec.name+suffix), raw, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, rec.name+".txt"), []byte(rec.text()), 0o644)
}
