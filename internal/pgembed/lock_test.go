package pgembed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A second Start on a folder in use is refused, in one line naming the
// holder's pid, and leaves the running server alone.
func TestSecondStartOnFolderInUseIsRefused(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(reachableDir(t), "c")
	first := startCluster(t, Config{DataDir: dataDir})
	pid := postmasterPID(t, first)

	_, err := Start(context.Background(), Config{DataDir: dataDir, Logger: testLogger(t)})
	var inUse *InUseError
	if !errors.As(err, &inUse) || inUse.PID != os.Getpid() {
		t.Fatalf("second Start: %v; want an InUseError naming pid %d", err, os.Getpid())
	}
	if msg := err.Error(); !strings.Contains(msg, strconv.Itoa(os.Getpid())) || strings.Contains(msg, "\n") {
		t.Fatalf("error %q: want one line naming pid %d", msg, os.Getpid())
	}
	if got := postmasterPID(t, first); got != pid || !alive(pid) {
		t.Fatalf("first server pid %d (alive %v) changed to %d", pid, alive(pid), got)
	}
	conn := connect(t, first.ConnString("postgres"))
	if got := queryString(t, conn, "SELECT 1::text"); got != "1" {
		t.Fatalf("first server: SELECT 1 = %q", got)
	}
	conn.Close(context.Background())

	// Stop hands the folder over.
	if err := first.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	startCluster(t, Config{DataDir: dataDir})
}

func TestLockDirNamesHolder(t *testing.T) {
	dir := t.TempDir()
	l, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockDir(dir); err == nil {
		t.Fatal("second lock on the same folder succeeded")
	}
	l.release()
	l2, err := lockDir(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l2.release()
	fi, err := os.Stat(filepath.Join(dir, lockFileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("lock file mode %v (%v), want 0600", fi.Mode(), err)
	}
}
