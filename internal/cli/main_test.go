package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/lethe-mq/lethe/internal/pgtest"
)

// execEnv makes the test binary run as the lethe command (the arguments
// are the variable's value), so tests can start real lethe processes.
const execEnv = "LETHE_CLI_TEST_EXEC"

// TestMain keeps the tests away from the developer's own config file and
// LETHE_* variables (the config folder is one that does not exist, unless
// a test sets its own), or runs as lethe itself when execEnv is set.
func TestMain(m *testing.M) {
	if args := os.Getenv(execEnv); args != "" {
		os.Exit(runLethe(strings.Fields(args)))
	}
	if err := os.Setenv("XDG_CONFIG_HOME", filepath.Join(os.TempDir(), "lethe-cli-test-no-config-"+strconv.Itoa(os.Getpid()))); err != nil {
		panic(err)
	}
	for _, k := range []string{"LETHE_URL", "LETHE_TOKEN", "LETHE_CONTEXT"} {
		if err := os.Unsetenv(k); err != nil {
			panic(err)
		}
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
