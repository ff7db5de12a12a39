package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// testVersion is the version the tests stamp into the binary.
const testVersion = "v0.0.0-deploytest"

// build runs deploy/build.sh, as the Dockerfile and CI do, into a temporary
// folder and returns the binary's path.
func build(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "lethe")
	cmd := exec.Command("./build.sh", out)
	cmd.Env = append(os.Environ(), "VERSION="+testVersion)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deploy/build.sh: %v\n%s", err, b)
	}
	return out
}

// readFile returns a file of this folder or the repository.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantContains(t *testing.T, what, got string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(got, p) {
			t.Errorf("%s lacks %q", what, p)
		}
	}
}
