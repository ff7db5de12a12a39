package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSystemdUnitIsHardened(t *testing.T) {
	t.Parallel()
	unit := readFile(t, "lethe.service")
	wantContains(t, "lethe.service", unit,
		"ExecStart=/usr/local/bin/lethe serve",
		"EnvironmentFile=-/etc/lethe/lethe.env",
		"DynamicUser=yes",
		"StateDirectory=lethe",
		"Environment=LETHE_DATA_DIR=/var/lib/lethe",
		"NoNewPrivileges=yes",
		"ProtectSystem=strict",
		"ProtectHome=yes",
		"PrivateTmp=yes",
		"CapabilityBoundingSet=\n")

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed; the static checks above ran")
	}
	// verify checks every key and that ExecStart can run: point it at a
	// real executable.
	dir := t.TempDir()
	path := filepath.Join(dir, "lethe.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(unit, "/usr/local/bin/lethe", "/bin/true")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
