package pgtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/lethe-mq/lethe/internal/pgembed"
)

// watchdogScript waits until its stdin reaches EOF - which happens when
// the test binary exits, however it exits - then shuts the server down if
// it still runs from our data folder and deletes the given folders.
// $1 is the data folder; the rest are folders to delete.
const watchdogScript = `
cat >/dev/null
data=$1; shift
alive() { kill -0 "$1" 2>/dev/null && ! grep -qs '^State:[[:space:]]*Z' "/proc/$1/status"; }
pid=$(head -n 1 "$data/postmaster.pid" 2>/dev/null)
if [ -n "$pid" ] && alive "$pid"; then
	cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null) || cwd=$data
	if [ "${cwd% (deleted)}" = "$data" ]; then
		for sig in INT QUIT; do
			kill -$sig "$pid" 2>/dev/null
			i=0
			while [ $i -lt 100 ] && alive "$pid"; do sleep 0.1; i=$((i+1)); done
		done
	fi
fi
rm -rf "$@"
`

// watchdogPipe is the write end of the watchdog's stdin. It must stay
// referenced for the life of the process: if it were collected, its
// finalizer would close it and the watchdog would fire early.
var watchdogPipe *os.File //nolint:unused // written only, to keep the pipe referenced

// startWatchdog covers the exits Main never sees return: a `go test
// -timeout` panic, a test's panic, Ctrl-C, SIGKILL. Without it each such
// run would leave a server running and its files in the temp folder.
// The kernel closes our end of the pipe when we die, so no polling is
// needed; on a normal exit Main has already cleaned up and it does nothing.
func startWatchdog(c *pgembed.Cluster, dirs ...string) error {
	data := filepath.Join(c.Dir(), "data")
	if resolved, err := filepath.EvalSymlinks(data); err == nil {
		data = resolved
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	args := append([]string{"-c", watchdogScript, "lethe-pgtest-watchdog", data, c.Dir()}, dirs...)
	cmd := exec.Command("/bin/sh", args...)
	cmd.Stdin = r
	// Own session: a Ctrl-C aimed at `go test` must not kill the watchdog
	// before it has done its job.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return err
	}
	cmd.Process.Release()
	watchdogPipe = w
	return nil
}
