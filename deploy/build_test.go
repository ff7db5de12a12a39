package deploy

import (
	"os/exec"
	"strings"
	"testing"
)

func TestBuildScriptStampsTheVersion(t *testing.T) {
	t.Parallel()
	bin := build(t)
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "lethe "+testVersion+" (") {
		t.Fatalf("the built binary's version: %q, %v; want %s", out, err, testVersion)
	}
	out, err = exec.Command(bin, "--version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "lethe "+testVersion {
		t.Fatalf("lethe --version: %q, %v", out, err)
	}
	if out, err := exec.Command("go", "version", "-m", bin).CombinedOutput(); err != nil || !strings.Contains(string(out), "CGO_ENABLED=0") {
		t.Fatalf("the binary is not static (CGO_ENABLED=0): %v\n%s", err, out)
	}
}

// TestDockerfileBuildsWithTheScript keeps the image and CI on one build:
// the Dockerfile must build with deploy/build.sh, not its own go build.
func TestDockerfileBuildsWithTheScript(t *testing.T) {
	t.Parallel()
	df := readFile(t, "../Dockerfile")
	wantContains(t, "Dockerfile", df,
		`RUN VERSION="${VERSION}" deploy/build.sh /out/lethe`,
		"COPY --from=build /out/lethe /usr/local/bin/lethe",
		"postgresql-15",         // the embedded default works in the image
		"USER lethe",            // not root
		"VOLUME /var/lib/lethe", // LETHE_DATA_DIR
		"LETHE_DATA_DIR=/var/lib/lethe",
		"GET /health")
	if strings.Contains(df, "go build") {
		t.Error("the Dockerfile runs go build itself; it must run deploy/build.sh")
	}
	if di := readFile(t, "../.dockerignore"); !strings.Contains(di, "lethe-data") {
		t.Error(".dockerignore must keep a local lethe-data folder out of the build context")
	}
}
