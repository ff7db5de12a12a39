package faults_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/pgembed"
)

// pgrCtlTimeout bounds one pg_ctl command (its own -t follows it).
const pgrCtlTimeout = 60 * time.Second

// pgrCluster is a PostgreSQL of the test's own, which the test may crash
// and restart with pg_ctl: the shared test cluster must stay up for
// everyone else.
type pgrCluster struct {
	*pgembed.Cluster
	pgCtl string
	owner *syscall.Credential // nil: the cluster runs as ourselves
}

// pgrStartCluster starts a private cluster and stops and removes it when
// the test ends.
func pgrStartCluster(t *testing.T) *pgrCluster {
	t.Helper()
	// Not t.TempDir: as root, the server's OS user must be able to enter
	// the folder, and pgembed hands a fresh empty one over to it.
	dir, err := os.MkdirTemp("", "lethe-faults-pg-")
	if err != nil {
		t.Fatal(err)
	}
	binDir, err := pgembed.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := pgembed.Start(ctx, pgembed.Config{DataDir: dir, BinDir: binDir, Logger: quiet})
	if err != nil {
		os.RemoveAll(dir)
		t.Fatalf("start a private PostgreSQL: %v", err)
	}
	cl := &pgrCluster{Cluster: c, pgCtl: filepath.Join(binDir, "pg_ctl")}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Errorf("stop the private PostgreSQL: %v", err)
		}
		if t.Failed() {
			t.Logf("last lines of %s:\n%s", c.LogPath(), procTail(c.LogPath(), 15))
		}
		os.RemoveAll(c.Dir())
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		if cl.owner, err = pgrOwner(c.OSUser()); err != nil {
			t.Fatal(err)
		}
	}
	return cl
}

// pgrOwner is the credential of the OS user pgembed runs the server as
// when we are root (postgres refuses to run as root).
func pgrOwner(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("the server's OS user %s: %w", name, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("%s has uid/gid %q/%q", name, u.Uid, u.Gid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// pgctl runs pg_ctl on the cluster's data folder as the cluster owner and
// waits for it to finish what it was asked.
func (c *pgrCluster) pgctl(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), pgrCtlTimeout)
	defer cancel()
	full := append([]string{"-D", filepath.Join(c.Dir(), "data"), "-w", "-t", strconv.Itoa(int(pgrCtlTimeout.Seconds()) - 5)}, args...)
	cmd := exec.CommandContext(ctx, c.pgCtl, full...)
	cmd.Dir = c.Dir()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if c.owner != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.owner}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// restartImmediate crashes the server (no shutdown checkpoint, clients cut
// off) and starts it again, which replays the WAL.
func (c *pgrCluster) restartImmediate() error {
	return c.pgctl("restart", "-m", "immediate", "-l", c.LogPath())
}

// stopImmediate crashes the server and leaves it down.
func (c *pgrCluster) stopImmediate() error { return c.pgctl("stop", "-m", "immediate") }

// startAgain starts a stopped server with the options of its last start:
// `pg_ctl restart` reads them from postmaster.opts, `start` would not.
func (c *pgrCluster) startAgain() error { return c.pgctl("restart", "-l", c.LogPath()) }
