package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/internal/testserver"
)

// testedMarker precedes each README block this test runs.
const testedMarker = "<!-- tested: deploy/readme_test.go"

// TestREADMEQuickstartRuns runs the README's tested shell blocks, in order,
// as a user would paste them: with the binary deploy/build.sh makes on the
// PATH, against a real server. The only change is the server's address:
// localhost:6632 becomes the test server's, and LETHE_URL points the CLI at
// it. Any failing command fails the test (bash -e, pipefail).
func TestREADMEQuickstartRuns(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("the README's quickstart needs jq; install it (apt-get install jq)")
	}
	blocks := testedBlocks(t, readFile(t, "../README.md"))
	if len(blocks) < 2 {
		t.Fatalf("found %d tested blocks in README.md, want the quickstart and the first five minutes", len(blocks))
	}
	bin := build(t)
	srv := testserver.Start(t, testserver.Options{})
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	home := t.TempDir()
	env := []string{
		"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"LETHE_URL=" + srv.URL,
	}
	for i, block := range blocks {
		script := strings.ReplaceAll(block, "localhost:6632", hostPort)
		cmd := exec.Command("bash", "-euo", "pipefail", "-x", "-c", script)
		cmd.Env, cmd.Dir = env, home
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README block %d failed: %v\n%s", i+1, err, out)
		}
		t.Logf("README block %d:\n%s", i+1, out)
	}
}

// testedBlocks returns the body of each ```sh block right after a marker.
func testedBlocks(t *testing.T, readme string) []string {
	t.Helper()
	var blocks []string
	for _, part := range strings.Split(readme, testedMarker)[1:] {
		_, rest, ok := strings.Cut(part, "```sh\n")
		body, _, closed := strings.Cut(rest, "\n```")
		if !ok || !closed {
			t.Fatalf("a tested README block is not a ```sh fence:\n%.200s", part)
		}
		blocks = append(blocks, body)
	}
	return blocks
}
