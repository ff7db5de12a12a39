// Command bench measures lethe against the raw PostgreSQL ceiling and
// against River and NATS JetStream, side by side, on one machine:
//
//	go run ./bench            # the full run, about 25 minutes
//	go run ./bench -quick     # every scenario briefly: a smoke test
//	go run ./bench -soak 2h   # only the soak: a steady load, the footprint sampled (soak.md)
//	go run ./bench -profile   # also where the time goes: see below
//	bash bench/run.sh         # installs nats-server if missing, then the full run
//
// It starts a private PostgreSQL, lethe (as a subprocess, so its memory is
// its own) and nats-server on loopback, prints one progress line a second
// on stderr, and writes results.md, results.json and the charts to a
// folder of their own under bench/out/runs (git ignores it; -out names
// another). See BENCHMARKS.md.
//
// With -profile, every measured window (each push shape, pop+ack, fan-out,
// latency, sweep, tier drop, held move, encryption, and each ceiling) is
// also profiled: lethe runs with LETHE_PPROF_ADDR on a loopback port and
// the bench records its CPU profile over the window and its heap at the
// end; the private PostgreSQL runs with pg_stat_statements (track = all)
// reset at the window's start and read at its end. Each window leaves
// profiles/<name>.txt in the output folder (top 15 by flat and by cum, the heap's top
// 10, peak RSS, the top 8 statements) beside <name>.cpu.pprof and
// <name>.heap.pprof, and results.md gains a Profiles section (results.json
// the same numbers), with lethe CPU and PostgreSQL time per message of
// each push beside the ceiling's per row. Without -profile none of this
// runs: no pprof address, no extension.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	opts, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	out, err := Run(ctx, opts, os.Stderr)
	stop() // os.Exit skips deferred calls
	if out != nil {
		for _, p := range out.Written {
			fmt.Println("wrote", p)
		}
		for _, f := range out.Failures {
			fmt.Fprintln(os.Stderr, "failed:", f)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if len(out.Failures) > 0 {
		os.Exit(1)
	}
}
