// Command queenpeer measures pop+ack on any server speaking Queen's HTTP
// API, lethe or Queen itself, the same way for both, so their figures can
// be set side by side (the goal: lethe's pop+ack at least twice Queen's on
// the same PostgreSQL and load generator). It pushes a backlog of random,
// incompressible payloads over a fresh queue's partitions, then drains it
// with consumers that pop batches without waiting and ack each batch in
// one request, checking that every message was delivered exactly once.
//
//	go run ./bench/queenpeer -url http://127.0.0.1:6632 -system lethe
//	go run ./bench/queenpeer -url http://127.0.0.1:6633 -system queen -n 20000 -json runs.jsonl
//
// Progress goes to stderr once a second; the one-line result to stdout,
// and with -json also as a JSON line appended to that file. It exits 1
// unless every message was pushed and delivered once. bench/queen.sh runs
// it alternately against lethe and Queen on one PostgreSQL.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	o, err := parseOptions(os.Args[1:], os.Stderr)
	if errors.Is(err, errHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "queenpeer:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	res, err := run(ctx, o, os.Stderr)
	stop() // os.Exit skips deferred calls
	if res != nil {
		fmt.Println(res.line())
		if o.jsonPath != "" {
			if jerr := res.appendJSON(o.jsonPath); jerr != nil && err == nil {
				err = jerr
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "queenpeer:", err)
		os.Exit(1)
	}
}
