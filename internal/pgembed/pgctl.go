package pgembed

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// defaultWait is how long pg_ctl may wait for a start or stop when the
// caller's ctx has no deadline (pg_ctl's own default is also 60s).
const defaultWait = 60 * time.Second

// pgctl runs pg_ctl against our data folder as the cluster owner. Its -t
// follows ctx so pg_ctl gives up on its own, with a readable message,
// before ctx kills it.
func (c *Cluster) pgctl(ctx context.Context, args ...string) (string, error) {
	full := append([]string{"-D", c.layout.dataDir()}, args...)
	if args[len(args)-1] != "status" {
		full = append(full, "-w", "-t", strconv.Itoa(waitSeconds(ctx)))
	}
	out, err := c.run.command(ctx, c.layout.root, filepath.Join(c.binDir, "pg_ctl"), full...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// pgctlStart starts the server; a failure is one line naming the server's
// own complaint (from the log written since offset) and where the log is.
func (c *Cluster) pgctlStart(ctx context.Context, offset int64) error {
	out, err := c.pgctl(ctx, "-l", c.layout.logFile(), "-o", postgresOptions(c.port, c.settings), "start")
	if err != nil {
		cause := keyLine(logSince(c.layout.logFile(), offset))
		if cause == "" {
			cause = keyLine(out)
		}
		return fmt.Errorf("pgembed: PostgreSQL did not start: %s (server log: %s)", cause, c.layout.logFile())
	}
	return nil
}

// pgctlStop asks for a fast shutdown and, if that does not finish, an
// immediate one (crash-like, recovered from WAL on the next start), so
// Stop never leaves a server behind just because a client hung.
func (c *Cluster) pgctlStop(ctx context.Context) error {
	out, err := c.pgctl(ctx, "-m", "fast", "stop")
	if err == nil {
		return nil
	}
	if !c.pgctlRunning(ctx) {
		// pg_ctl sees no server: either it is already down (fine), or
		// the data folder was deleted under it and only its pid can
		// reach it.
		return c.stopByPID(ctx)
	}
	if ctx.Err() == nil {
		c.log.Warn("pgembed: fast shutdown failed, trying immediate", "err", err, "output", out)
		if out, err = c.pgctl(ctx, "-m", "immediate", "stop"); err == nil {
			return nil
		}
	}
	return fmt.Errorf("pgembed: pg_ctl stop failed: %w\n%s", err, out)
}

// pgctlRunning reports whether pg_ctl sees a live server for our data
// folder (exit status 0 from `pg_ctl status`).
func (c *Cluster) pgctlRunning(ctx context.Context) bool {
	_, err := c.pgctl(ctx, "status")
	return err == nil
}

// waitSeconds turns ctx's remaining time into pg_ctl's -t (whole seconds,
// at least 1).
func waitSeconds(ctx context.Context) int {
	d := defaultWait
	if dl, ok := ctx.Deadline(); ok {
		d = time.Until(dl)
	}
	return max(1, int(math.Ceil(d.Seconds())))
}

// stopByPID stops the postmaster recorded at start if it still runs from
// our data folder (deleted or not).
func (c *Cluster) stopByPID(ctx context.Context) error {
	if c.pid == 0 || !alive(c.pid) {
		return nil
	}
	if yes, ok := servesDir(c.pid, c.realDataDir); ok && !yes {
		return nil // pid reused by something else: our server is gone
	}
	c.log.Warn("pgembed: pg_ctl cannot see the server (data folder removed?); signalling it", "pid", c.pid)
	return signalStop(ctx, c.pid)
}
