package pgembed

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStartStopRestartKeepsData(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(reachableDir(t), "cluster")

	began := time.Now()
	c := startDurableCluster(t, Config{DataDir: dataDir})
	t.Logf("first start (initdb + start): %v", time.Since(began))

	if c.Dir() != dataDir {
		t.Fatalf("Dir() = %q, want %q", c.Dir(), dataDir)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "pg.log")); err != nil {
		t.Errorf("server log not in DataDir: %v", err)
	}
	conn := connect(t, c.ConnString("postgres"))
	if got := queryString(t, conn, "SELECT 1::text"); got != "1" {
		t.Fatalf("SELECT 1 = %q", got)
	}
	if got := queryString(t, conn, "SHOW max_connections"); got != "200" {
		t.Errorf("max_connections = %s, want 200", got)
	}
	if got := queryString(t, conn, "SHOW fsync"); got != "on" {
		t.Errorf("fsync = %s, want on", got)
	}
	if _, err := conn.Exec(context.Background(), "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('hello')"); err != nil {
		t.Fatal(err)
	}
	conn.Close(context.Background())

	// The URL form goes over the socket too when there is no TCP listener.
	viaURL := connect(t, c.URL("postgres"))
	if got := queryString(t, viaURL, "SELECT coalesce(inet_server_addr()::text, 'socket')"); got != "socket" {
		t.Errorf("URL connected over %q, want the Unix socket", got)
	}
	viaURL.Close(context.Background())

	if err := c.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if _, err := connect1(c.ConnString("postgres")); err == nil {
		t.Fatal("server still accepts connections after Stop")
	}

	began = time.Now()
	c2 := startDurableCluster(t, Config{DataDir: dataDir})
	t.Logf("restart on existing data: %v", time.Since(began))
	conn = connect(t, c2.ConnString("postgres"))
	if got := queryString(t, conn, "SELECT v FROM kept"); got != "hello" {
		t.Fatalf("after restart kept.v = %q, want hello", got)
	}
}

func TestLongDataDirUsesShortSocketDir(t *testing.T) {
	t.Parallel()
	dataDir := reachableDir(t)
	for len(dataDir) <= 150 {
		dataDir = filepath.Join(dataDir, "a-rather-long-folder-name")
	}
	c := startCluster(t, Config{DataDir: dataDir})
	if c.Dir() != dataDir {
		t.Fatalf("Dir() = %q, want %q", c.Dir(), dataDir)
	}
	if !c.layout.ownSockDir || len(c.layout.sockDir)+socketFileLen > maxSocketPath {
		t.Fatalf("socket dir %q not shortened", c.layout.sockDir)
	}
	conn := connect(t, c.ConnString("postgres"))
	if got := queryString(t, conn, "SELECT 1::text"); got != "1" {
		t.Fatalf("SELECT 1 = %q", got)
	}
	conn.Close(context.Background())
	sock := c.layout.sockDir
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket dir %s left behind after Stop (err=%v)", sock, err)
	}
}

func TestSettingsOverrideDefaults(t *testing.T) {
	t.Parallel()
	c := startCluster(t, Config{
		DataDir:  filepath.Join(reachableDir(t), "c"),
		Settings: map[string]string{"max_connections": "50", "application_name": "it's quoted"},
	})
	conn := connect(t, c.ConnString("postgres"))
	if got := queryString(t, conn, "SHOW max_connections"); got != "50" {
		t.Errorf("max_connections = %s, want 50", got)
	}
}

func TestStartFailureIncludesServerLog(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(reachableDir(t), "c")
	seedCluster(t, dataDir)
	_, err := Start(context.Background(), Config{
		DataDir:  dataDir,
		Logger:   testLogger(t),
		Settings: map[string]string{"shared_buffers": "lots"},
	})
	if err == nil {
		t.Fatal("Start succeeded with an invalid setting")
	}
	if !strings.Contains(err.Error(), "shared_buffers") || !strings.Contains(err.Error(), "pg.log") {
		t.Fatalf("error lacks the server's complaint or the log's path:\n%v", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("error is not one line:\n%v", err)
	}
}

// A lethe killed with SIGKILL leaves its server running and its lock
// released (the kernel drops a dead process's flock); the next Start must
// take over rather than fail.
func TestStartTakesOverServerOfKilledProcess(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(reachableDir(t), "c")
	old := startCluster(t, Config{DataDir: dataDir})
	oldPID := postmasterPID(t, old)
	old.lock.release() // what the kernel does when the owner dies

	c := startCluster(t, Config{DataDir: dataDir})
	if pid := postmasterPID(t, c); pid == oldPID {
		t.Fatalf("second Start kept server pid %d; want a fresh server", pid)
	}
	if alive(oldPID) {
		t.Fatalf("old server pid %d still running", oldPID)
	}
	conn := connect(t, c.ConnString("postgres"))
	if got := queryString(t, conn, "SELECT 1::text"); got != "1" {
		t.Fatalf("SELECT 1 = %q", got)
	}
}

// A server killed with SIGKILL leaves a stale postmaster.pid and, briefly,
// child processes; Start must recover.
func TestStartAfterServerKilled(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(reachableDir(t), "c")
	c := startCluster(t, Config{DataDir: dataDir})
	conn := connect(t, c.ConnString("postgres"))
	if _, err := conn.Exec(context.Background(), "CREATE TABLE t (v int); INSERT INTO t VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(context.Background())

	pid := postmasterPID(t, c)
	c.lock.release() // its lethe died too
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)

	c2 := startCluster(t, Config{DataDir: dataDir})
	conn = connect(t, c2.ConnString("postgres"))
	if got := queryString(t, conn, "SELECT v::text FROM t"); got != "42" {
		t.Fatalf("after crash t.v = %q, want 42", got)
	}
}

// Deleting the folder under a running server must not make Stop leave
// the server running: pg_ctl cannot see it any more, Stop must still.
func TestStopAfterDataDirRemoved(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(reachableDir(t), "c")
	c := startCluster(t, Config{DataDir: dataDir})
	pid := postmasterPID(t, c)
	if err := os.RemoveAll(dataDir); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if alive(pid) {
		t.Fatalf("server pid %d still running after Stop", pid)
	}
}

func postmasterPID(t *testing.T, c *Cluster) int {
	t.Helper()
	pid := readPostmasterPID(c.layout.dataDir())
	if pid == 0 {
		t.Fatal("no postmaster.pid")
	}
	return pid
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
	}
	t.Fatalf("pid %d still alive", pid)
}

// After a crash and a reboot (or in a container) the pid in a leftover
// postmaster.pid may belong to an unrelated live process, or the file may
// be truncated; postgres refuses to start over either on its own.
func TestStartOverStalePidFile(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(reachableDir(t), "c")
	c := startCluster(t, Config{DataDir: dataDir})
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(c.layout.dataDir(), "postmaster.pid")
	for _, content := range []string{
		strconv.Itoa(os.Getpid()) + "\n" + c.layout.dataDir() + "\n", // alive, but not a server
		"garbage",
	} {
		if err := os.WriteFile(pidFile, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		c := startCluster(t, Config{DataDir: dataDir})
		conn := connect(t, c.ConnString("postgres"))
		if got := queryString(t, conn, "SELECT 1::text"); got != "1" {
			t.Fatalf("SELECT 1 = %q", got)
		}
		conn.Close(context.Background())
		if err := c.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
