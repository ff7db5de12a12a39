// Package meter drives a bounded load and reports on it: a worker pool that
// stops by itself, one progress line per second on stderr, per-second rates
// for the spread, and latency percentiles.
package meter

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// Progress prints status() once a second, prefixed with name and the time
// since it started, until Stop. It is for the phases that are not a worker
// loop: filling a backlog, waiting for a sweep.
type Progress struct {
	stop chan struct{}
	done sync.WaitGroup
}

// StartProgress begins printing.
func StartProgress(out io.Writer, name string, status func() string) *Progress {
	p := &Progress{stop: make(chan struct{})}
	began := time.Now()
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				fmt.Fprintf(out, "%-44s %5.0fs  %s\n", name, time.Since(began).Seconds(), status())
			}
		}
	}()
	return p
}

// Stop ends the printing and waits for the printer to exit.
func (p *Progress) Stop() {
	close(p.stop)
	p.done.Wait()
}

// Sleep waits d or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Group formats n with thousands separators, for progress lines.
func Group(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + Group(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
