package pgembed

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"

	"github.com/lethe-mq/lethe/internal/slowstep"
)

// ensureStandbyCopy makes the data folder a copy of the running primary
// (pg_basebackup over its Unix socket, -R: the copy starts as its
// streaming standby) unless it already holds a cluster, staged as initdb's
// is.
func ensureStandbyCopy(ctx context.Context, r *runner, binDir string, l layout, primary *Cluster, log *slog.Logger) error {
	return stageDataDir(r, l, "data.basebackup", func(staging string) error {
		step := slowstep.Begin(log, "pgembed: copying the primary for a standby", slowstep.After, "data", l.dataDir())
		out, err := r.command(ctx, l.root, filepath.Join(binDir, "pg_basebackup"),
			"-h", primary.layout.sockDir, "-p", strconv.Itoa(primary.port), "-U", "postgres",
			"-D", staging, "-R", "-X", "stream", "-c", "fast").CombinedOutput()
		step.End()
		if err != nil {
			return fmt.Errorf("pgembed: pg_basebackup failed (%w): %s; the primary needs Config.Replication", err, keyLine(string(out)))
		}
		return nil
	})
}

// Promote ends a standby's recovery: it becomes a primary that takes
// writes, and returns once it does.
func (c *Cluster) Promote(ctx context.Context) error {
	if out, err := c.pgctl(ctx, "promote"); err != nil {
		return fmt.Errorf("pgembed: pg_ctl promote: %w\n%s", err, out)
	}
	return nil
}

// Crash stops the server at once, as a power loss would (an immediate
// shutdown: no checkpoint, clients cut off), and unlocks the data folder.
// For failover tests; Stop is the shutdown to use otherwise.
func (c *Cluster) Crash(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	if out, err := c.pgctl(ctx, "-m", "immediate", "stop"); err != nil {
		return fmt.Errorf("pgembed: pg_ctl stop -m immediate: %w\n%s", err, out)
	}
	c.stopped = true
	c.release()
	return nil
}
