package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/lethe-mq/lethe/internal/pgtest"
)

// TestMain keeps the tests away from the developer's own config file and
// LETHE_* variables: the config folder is one that does not exist, unless
// a test sets its own.
func TestMain(m *testing.M) {
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(os.TempDir(), "lethe-cli-test-no-config-"+strconv.Itoa(os.Getpid())))
	for _, k := range []string{"LETHE_URL", "LETHE_TOKEN", "LETHE_CONTEXT"} {
		os.Unsetenv(k)
	}
	pgtest.Main(m)
}
