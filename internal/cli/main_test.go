package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/lethe-mq/lethe/internal/pgtest"
)

// execEnv makes the test binary run as the lethe command (the arguments
// are the variable's value), so tests can start real lethe processes.
const execEnv = "LETHE_CLI_TEST_EXEC"

func TestMain(m *testing.M) {
	if args := os.Getenv(execEnv); args != "" {
		os.Exit(runLethe(strings.Fields(args)))
	}
	pgtest.Main(m)
}

// runLethe is cmd/lethe's main.
func runLethe(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := NewRoot(os.Stdout, os.Stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	return 0
}
