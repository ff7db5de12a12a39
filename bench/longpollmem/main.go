// Command longpollmem measures the memory one waiting long poll costs a
// lethe replica: it starts a private PostgreSQL and lethe as a subprocess
// (or uses a running lethe), opens N pops with wait=true that find nothing,
// waits until lethe reports them all waiting, and prints lethe's resident
// memory before and after, and the difference per poll.
//
//	go run ./bench/longpollmem -n 5000
//	go run ./bench/longpollmem -url http://127.0.0.1:6632 -pid 12345 -n 5000
//
// N connections are open on both sides at once: raise `ulimit -n` above N
// plus a margin first. lethe is started with LETHE_MAX_LONG_POLLS=N.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/stack"
)

type options struct {
	n        int
	url      string
	pid      int
	wait     time.Duration
	deadline time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 1000, "long polls to open")
	flag.StringVar(&o.url, "url", "", "measure a lethe already running here (needs -pid; its LETHE_MAX_LONG_POLLS must allow -n)")
	flag.IntVar(&o.pid, "pid", 0, "process id of the lethe at -url, whose memory is read")
	flag.DurationVar(&o.wait, "poll-timeout", 2*time.Minute, "timeout of each long poll: how long they stay open at most")
	flag.DurationVar(&o.deadline, "ready-within", time.Minute, "how long the polls may take to all be waiting")
	flag.Parse()
	if o.n < 1 || (o.url != "") != (o.pid != 0) {
		fmt.Fprintln(os.Stderr, "longpollmem: -n must be at least 1, and -url and -pid go together")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	res, err := run(ctx, o, os.Stderr)
	stop() // os.Exit skips deferred calls
	if err != nil {
		fmt.Fprintln(os.Stderr, "longpollmem:", err)
		os.Exit(1)
	}
	fmt.Println(res)
}

// result is one measurement.
type result struct {
	n             int
	before, after int64 // VmRSS of lethe, bytes
	took          time.Duration
}

func (r result) String() string {
	perPoll := float64(r.after-r.before) / float64(r.n)
	return fmt.Sprintf("%d waiting long polls: lethe RSS %.1f MiB before, %.1f MiB with them waiting: %.1f KiB per poll (opened in %s)",
		r.n, mib(r.before), mib(r.after), perPoll/1024, r.took.Round(time.Millisecond))
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// run brings up (or finds) lethe and measures.
func run(ctx context.Context, o options, log io.Writer) (result, error) {
	url, pid := o.url, o.pid
	if url == "" {
		l, cleanup, err := startLethe(ctx, o.n, log)
		if err != nil {
			return result{}, err
		}
		defer cleanup()
		url, pid = l.URL, l.PID
	}
	return measure(ctx, url, pid, o, log)
}

func startLethe(ctx context.Context, n int, log io.Writer) (*stack.Lethe, func(), error) {
	tmp, err := os.MkdirTemp("", "longpollmem-")
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintln(log, "starting a private PostgreSQL and building lethe in", tmp)
	pg, err := stack.StartPostgres(ctx, tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, nil, err
	}
	cleanup := func() {
		_ = pg.Stop(context.Background())
		os.RemoveAll(tmp)
	}
	if err := pg.EnsureDatabase(ctx, "lethe"); err != nil {
		cleanup()
		return nil, nil, err
	}
	bin, err := stack.BuildLethe(ctx, tmp)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	if err := os.Setenv("LETHE_MAX_LONG_POLLS", strconv.Itoa(n)); err != nil {
		cleanup()
		return nil, nil, err
	}
	l, err := stack.StartLetheProcess(ctx, bin, pg.DSN("lethe"), filepath.Join(tmp, "lethe-data"),
		filepath.Join(tmp, "lethe.log"), false)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return l, func() { l.Stop(); cleanup() }, nil
}
