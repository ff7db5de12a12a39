package pgembed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockFileName is the lock one process holds on a data folder for as long
// as it runs the cluster in it.
const lockFileName = "lethe.lock"

// InUseError says another process holds a data folder. Start returns it
// before touching anything in the folder, so the other process's server
// keeps running.
type InUseError struct {
	Dir string
	PID int // 0 when the holder's pid could not be read
}

func (e *InUseError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = "process " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("pgembed: data folder %s is in use by %s (it holds %s); stop it first, or use another data folder",
		e.Dir, who, lockFileName)
}

// dirLock is a held flock on a data folder's lock file. The kernel drops
// it when the process dies however it dies, so a killed lethe never
// leaves a folder locked. Go opens files close-on-exec, so the server
// processes pg_ctl starts do not inherit it.
type dirLock struct{ f *os.File }

// lockDir takes the lock on dir or returns an *InUseError naming the
// holder.
func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pgembed: open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &InUseError{Dir: dir, PID: readLockPID(f)}
		}
		return nil, fmt.Errorf("pgembed: lock %s: %w", path, err)
	}
	// The pid is for the message of whoever comes second; the lock itself
	// is the flock.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f}, nil
}

func readLockPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil {
		return 0
	}
	return pid
}

// release lets the next process have the folder. The file stays: removing
// it would race with a process that has just opened it.
func (l *dirLock) release() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Close() // closing the only descriptor drops the flock
	l.f = nil
}
