package pgembed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// readPostmasterPID returns the pid recorded in the data folder, or 0.
func readPostmasterPID(dataDir string) int {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// alive reports whether pid is a live (not zombie) process. Servers are
// daemonized by pg_ctl, so they are not our children and may linger as
// zombies if the container's init does not reap them.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: kill(0) said it exists
	}
	// Format: "pid (comm) S ..."; comm may contain spaces or parentheses.
	if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}

// servesDir reports whether pid is a server process of dataDir: a
// postmaster's working directory is its data folder. The kernel appends
// " (deleted)" if the folder was removed under it. ok is false when the
// question cannot be answered (no /proc).
func servesDir(pid int, dataDir string) (yes, ok bool) {
	cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
	if err != nil {
		return false, false
	}
	cwd = strings.TrimSuffix(cwd, " (deleted)")
	return cwd == dataDir, true
}

// signalStop shuts down the postmaster pid directly, for when pg_ctl
// cannot (its data folder was deleted under it): SIGINT is PostgreSQL's
// fast shutdown, SIGQUIT its immediate one.
func signalStop(ctx context.Context, pid int) error {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGQUIT} {
		if err := syscall.Kill(pid, sig); errors.Is(err, syscall.ESRCH) {
			return nil
		}
		wait := time.Duration(waitSeconds(ctx)) * time.Second
		if sig == syscall.SIGQUIT {
			wait = 5 * time.Second
		}
		for deadline := time.Now().Add(wait); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
			if !alive(pid) {
				return nil
			}
		}
	}
	return fmt.Errorf("pgembed: server pid %d did not exit", pid)
}
