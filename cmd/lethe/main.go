// Command lethe is the lethe message log: `lethe serve` runs a replica, the
// other commands talk to one over HTTP.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/lethe-mq/lethe/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.NewRoot(os.Stdout, os.Stderr).ExecuteContext(ctx)
	stop() // os.Exit skips deferred calls
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
