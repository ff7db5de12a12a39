package profiling

import (
	"bytes"
	"context"
	"time"

	"github.com/google/pprof/profile"
)

// record is what one window found.
type record struct {
	key, name string
	database  string
	pgOn      bool // pg_stat_statements was reset at the window's start

	seconds  float64 // wall time the CPU profile covered
	cpu      *Top
	heap     *Top
	peakRSS  int64
	pg       *Statements
	cpuRaw   []byte
	heapRaw  []byte
	problems []string
}

func (r *record) problem(err error) {
	if err != nil {
		r.problems = append(r.problems, err.Error())
	}
}

// endLethe waits for lethe's CPU profile, then reads its heap (after a
// GC, so in-use bytes are what is live) and its peak RSS.
func (s *Scope) endLethe(ctx context.Context, rec *record, cpu *cpuCapture) {
	prof, err := cpu.finish()
	rec.problem(err)
	if prof != nil {
		rec.seconds = float64(prof.DurationNanos) / 1e9
		rec.cpu, rec.cpuRaw = summarize(rec, prof, "cpu")
	}
	heap, err := fetch(ctx, s.p.client, s.pprofURL+"/debug/pprof/heap?gc=1", 30*time.Second)
	rec.problem(err)
	if heap != nil {
		rec.heap, rec.heapRaw = summarize(rec, heap, "inuse_space")
	}
	if s.peakRSS != nil {
		peak, err := s.peakRSS()
		rec.problem(err)
		rec.peakRSS = peak
	}
}

// summarize sums one sample type of prof by function and encodes prof
// for its .pprof file.
func summarize(rec *record, prof *profile.Profile, typ string) (*Top, []byte) {
	top, err := TopOf(prof, typ)
	if err != nil {
		rec.problem(err)
		return nil, nil
	}
	var buf bytes.Buffer
	if err := prof.Write(&buf); err != nil {
		rec.problem(err)
		return &top, nil
	}
	return &top, buf.Bytes()
}
