package profiling

import (
	"bytes"
	"context"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	httppprof "net/http/pprof"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

const burnName = OwnPrefix + "bench/internal/profiling.burnCPU"

// cpuTime is this process's CPU time so far.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// burnCPU hashes until the process has used cpu more CPU time, so the
// profile holds enough samples however busy the machine is.
func burnCPU(t *testing.T, cpu time.Duration) {
	t.Helper()
	buf := make([]byte, 1<<16)
	until, deadline := cpuTime(t)+cpu, time.Now().Add(time.Minute)
	for cpuTime(t) < until {
		for range 64 {
			sum := sha256.Sum256(buf)
			buf[0] ^= sum[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("got less than %s of CPU in a minute", cpu)
		}
	}
}

// captureCPU profiles this process while it burns CPU: a real CPU profile.
func captureCPU(t *testing.T) *profile.Profile {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Fatal(err)
	}
	burnCPU(t, 400*time.Millisecond)
	pprof.StopCPUProfile()
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func find(funcs []Func, name string) (Func, bool) {
	for _, f := range funcs {
		if f.Name == name {
			return f, true
		}
	}
	return Func{}, false
}

func TestTopOfARealCPUProfile(t *testing.T) {
	top, err := TopOf(captureCPU(t), "cpu")
	if err != nil {
		t.Fatal(err)
	}
	if top.Unit != "nanoseconds" || top.Total < int64(200*time.Millisecond) {
		t.Fatalf("total %d %s, want at least 200 ms of CPU in nanoseconds", top.Total, top.Unit)
	}
	burn, ok := find(top.ByCum(15, ""), burnName)
	if !ok || top.Percent(burn.Cum) < 50 {
		t.Fatalf("burnCPU is not in the cum top 15 with at least 50%%: %+v", top.ByCum(15, ""))
	}
	// The test and captureCPU hand everything to burnCPU: pass-throughs.
	own := top.OwnByCum(3)
	if len(own) == 0 || own[0].Name != burnName {
		t.Fatalf("lethe's own top by cum %+v does not start at burnCPU", own)
	}
	for _, f := range own {
		if !strings.HasPrefix(f.Name, OwnPrefix) {
			t.Errorf("%s is not lethe's own", f.Name)
		}
	}
	flat := top.ByFlat(5)
	if !strings.Contains(flat[0].Name, "sha256") {
		t.Errorf("the hottest function by flat is %s, want sha256's block function: %+v", flat[0].Name, flat)
	}
	var sum int64
	for i, f := range top.Funcs {
		sum += f.Flat
		if f.Flat > f.Cum {
			t.Errorf("%s: flat %d above cum %d", f.Name, f.Flat, f.Cum)
		}
		if i < len(flat)-1 && flat[i].Flat < flat[i+1].Flat {
			t.Errorf("by flat is not sorted: %+v", flat)
		}
	}
	if sum != top.Total {
		t.Errorf("flat sums to %d, the total is %d", sum, top.Total)
	}
	if _, err := TopOf(captureCPU(t), "inuse_space"); err == nil || !strings.Contains(err.Error(), "cpu") {
		t.Errorf("a missing sample type: %v, want an error naming the types there are", err)
	}
}

var held [][]byte

//go:noinline
func holdHeap() {
	for range 32 {
		held = append(held, make([]byte, 1<<20))
	}
}

func TestTopOfARealHeapProfile(t *testing.T) {
	holdHeap()
	defer func() { held = nil }()
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	top, err := TopOf(p, "inuse_space")
	if err != nil {
		t.Fatal(err)
	}
	f, ok := find(top.ByFlat(10), OwnPrefix+"bench/internal/profiling.holdHeap")
	if !ok || f.Flat < 16<<20 {
		t.Fatalf("holdHeap holds 32 MiB but the heap's top 10 says %+v", top.ByFlat(10))
	}
	if top.Total < f.Flat {
		t.Errorf("total in use %d below holdHeap's %d", top.Total, f.Flat)
	}
}

// The capture lethe's windows use, against Go's own profile handler over
// real HTTP: a window of unknown length is covered by one-second requests
// until it ends, merged into one profile.
func TestCPUCaptureCoversTheWindowInSeconds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(httppprof.Profile))
	defer srv.Close()
	began := time.Now()
	c := startCPU(context.Background(), srv.Client(), srv.URL, 0) // the handler answers any path
	deadline := began.Add(30 * time.Second)
	for c.chunks.Load() < 1 {
		burnCPU(t, 50*time.Millisecond)
		if time.Now().After(deadline) {
			t.Fatal("the first one-second profile did not come back within 30 s")
		}
	}
	// The window ends 300 ms into the second request, which starts as soon
	// as the first is answered.
	for next := time.Now().Add(300 * time.Millisecond); time.Now().Before(next); {
		burnCPU(t, 20*time.Millisecond)
	}
	window := time.Since(began)
	p, err := c.finish()
	if err != nil {
		t.Fatal(err)
	}
	// Each request covers its second but for the round trip before it.
	if covered := time.Duration(p.DurationNanos); covered < 2*time.Second || covered < window-100*time.Millisecond {
		t.Errorf("the merged profile covers %s of a %s window, want two requests of a second covering it", covered, window)
	}
	top, err := TopOf(p, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := find(top.ByCum(15, ""), burnName); !ok {
		t.Errorf("burnCPU is not in the merged profile's top: %+v", top.ByCum(15, ""))
	}
}

// Cum counts a function once per sample even when it recurses, and flat
// goes to the innermost function of an inlined chain.
func TestTopOfCountsRecursionOnceAndInliningAtTheLeaf(t *testing.T) {
	fn := func(id uint64, name string) *profile.Function { return &profile.Function{ID: id, Name: name} }
	f, g, inner := fn(1, "f"), fn(2, "g"), fn(3, "inner")
	locF := &profile.Location{ID: 1, Line: []profile.Line{{Function: inner}, {Function: f}}} // inner inlined into f
	locG := &profile.Location{ID: 2, Line: []profile.Line{{Function: g}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}},
		Sample:     []*profile.Sample{{Location: []*profile.Location{locF, locG, locF}, Value: []int64{10}}},
		Location:   []*profile.Location{locF, locG},
		Function:   []*profile.Function{f, g, inner},
	}
	top, err := TopOf(p, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Func{"inner": {"inner", 10, 10}, "f": {"f", 0, 10}, "g": {"g", 0, 10}}
	for name, w := range want {
		if got, ok := find(top.Funcs, name); !ok || got != w {
			t.Errorf("%s: got %+v, want %+v", name, got, w)
		}
	}
	if top.Total != 10 {
		t.Errorf("total %d, want 10", top.Total)
	}
}

// OwnByCum leaves out a wrapper that hands 90% of its cum to one function
// of lethe's, and keeps the function where the work divides.
func TestOwnByCumSkipsPassThroughs(t *testing.T) {
	var fns []*profile.Function
	loc := map[string]*profile.Location{}
	for i, name := range []string{"wrapper", "handler", "a", "b", "lib"} {
		full := OwnPrefix + "internal/x." + name
		if name == "lib" {
			full = "net/http.lib" // not lethe's: a handoff goes through it
		}
		f := &profile.Function{ID: uint64(i + 1), Name: full}
		fns = append(fns, f)
		loc[name] = &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: f}}}
	}
	stack := func(v int64, names ...string) *profile.Sample {
		s := &profile.Sample{Value: []int64{v}}
		for _, n := range names {
			s.Location = append(s.Location, loc[n])
		}
		return s
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}},
		Sample: []*profile.Sample{stack(6, "a", "lib", "handler", "wrapper"), stack(4, "b", "handler", "lib", "wrapper"),
			stack(1, "lib", "wrapper")},
		Function: fns,
	}
	for _, l := range loc {
		p.Location = append(p.Location, l)
	}
	top, err := TopOf(p, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range top.OwnByCum(3) {
		got = append(got, strings.TrimPrefix(f.Name, OwnPrefix+"internal/x."))
	}
	// wrapper (11) hands 10, 91%, to handler; handler (10) splits 6/4.
	if strings.Join(got, ",") != "handler,a,b" {
		t.Errorf("OwnByCum = %v, want handler, a, b", got)
	}
}

func TestFileName(t *testing.T) {
	for key, want := range map[string]string{
		"lethe/push/b100/p1/1024":     "push-b100-p1-1KiB",
		"lethe/fanout/g5/100":         "fanout-g5-100B",
		"ceiling/segment-ingest/1024": "ceiling-segment-ingest-1KiB",
		"lethe/encrypt-push/on/100":   "encrypt-push-on-100B",
	} {
		if got := FileName(key); got != want {
			t.Errorf("FileName(%q) = %q, want %q", key, got, want)
		}
	}
}
