package pgembed

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
)

// leftover describes what the pid in a postmaster.pid file is now.
type leftover int

const (
	leftoverNone    leftover = iota // no pid file
	leftoverStale                   // pid is gone or is some unrelated process
	leftoverRunning                 // a server of this very data folder is still running
	leftoverUnknown                 // cannot tell; leave it to postgres
)

// clearLeftover deals with a postmaster.pid left by an earlier run.
//
// Start holds the data folder's lock by now, so a server still running
// from this folder belongs to no live lethe: its process was killed, the
// server was not. We stop it and start afresh rather than reuse it: its
// port, socket folder, settings and access rules (an older lethe's may
// listen on TCP with trust) may differ from this Config. A fast shutdown
// keeps every committed transaction.
//
// If the pid is dead, or now belongs to an unrelated process (pid reuse
// after a reboot or in a container), we delete the file: postgres would
// otherwise refuse to start when the reused pid is alive, and it cannot
// tell the difference when it lacks permission to signal that process.
func clearLeftover(ctx context.Context, c *Cluster, log *slog.Logger) error {
	pidFile := filepath.Join(c.layout.dataDir(), "postmaster.pid")
	switch state, pid := inspectPidFile(pidFile, c.layout.dataDir()); state {
	case leftoverStale:
		log.Info("pgembed: removing stale postmaster.pid", "pid", pid)
		if err := os.Remove(pidFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	case leftoverRunning:
		log.Info("pgembed: stopping server left running from an earlier run", "pid", pid)
		return c.pgctlStop(ctx)
	}
	return nil
}

func inspectPidFile(pidFile, dataDir string) (leftover, int) {
	if _, err := os.Stat(pidFile); err != nil {
		return leftoverNone, 0
	}
	pid := readPostmasterPID(dataDir)
	if pid == 0 {
		return leftoverStale, 0 // truncated file: postgres would call it bogus and refuse to start
	}
	switch err := syscall.Kill(pid, 0); {
	case errors.Is(err, syscall.ESRCH):
		return leftoverStale, pid
	case errors.Is(err, syscall.EPERM):
		// Our server runs as us (or as its own OS user while we are root, and
		// root may signal anyone), so a process we may not signal is not it.
		return leftoverStale, pid
	}
	want, err := filepath.EvalSymlinks(dataDir)
	if err != nil {
		want = dataDir
	}
	// Backends inherit the postmaster's working directory too, but the
	// pid file names the postmaster.
	switch yes, ok := servesDir(pid, want); {
	case !ok:
		return leftoverUnknown, pid // no /proc (macOS): do not guess
	case yes:
		return leftoverRunning, pid
	}
	return leftoverStale, pid
}
