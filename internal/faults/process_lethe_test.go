package faults_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// procBuildTimeout bounds `go build ./cmd/lethe`; a warm build cache makes
// it a link step of a few seconds.
const procBuildTimeout = 3 * time.Minute

// procStartTimeout bounds one start of lethe until /health answers 200.
const procStartTimeout = 30 * time.Second

// procBuildLethe builds ./cmd/lethe into a folder of t and returns the
// binary: the real executable users run, not the app package in-process.
func procBuildLethe(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "lethe")
	ctx, cancel := context.WithTimeout(context.Background(), procBuildTimeout)
	defer cancel()
	began := time.Now()
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", bin, "github.com/lethe-mq/lethe/cmd/lethe")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/lethe: %v\n%s", err, out)
	}
	t.Logf("built lethe in %v", time.Since(began).Round(time.Millisecond))
	return bin
}

// procLethe is `lethe serve` as a child process that a test can SIGKILL and
// start again on the same database. Its stderr goes to a log file that is
// shown when the test fails.
type procLethe struct {
	t       *testing.T
	bin     string
	dsn     string
	dataDir string
	logPath string

	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
	base   atomic.Value  // string: http://127.0.0.1:port of the running process
	starts int
}

// procNewLethe starts lethe against dsn and stops it when the test ends.
func procNewLethe(t *testing.T, bin, dsn string) *procLethe {
	t.Helper()
	dir := t.TempDir()
	l := &procLethe{t: t, bin: bin, dsn: dsn, dataDir: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "lethe.log")}
	l.base.Store("http://127.0.0.1:1")
	t.Cleanup(func() {
		if l.running() {
			l.kill()
		}
		if t.Failed() {
			t.Logf("last lines of lethe's log %s:\n%s", l.logPath, procTail(l.logPath, 15))
		}
	})
	l.start()
	return l
}

// URL is the base URL of the current process (a new port after a restart).
func (l *procLethe) URL() string { return l.base.Load().(string) }

// PID is the current process id.
func (l *procLethe) PID() int { return l.cmd.Process.Pid }

// procStartAttempts bounds starts that fail because another process took
// the free port procFreePort found before lethe could bind it.
const procStartAttempts = 3

// start launches lethe on a free port and waits until /health answers 200.
func (l *procLethe) start() {
	l.t.Helper()
	for attempt := 1; ; attempt++ {
		offset := procFileSize(l.logPath)
		err := l.launch()
		if err == nil {
			return
		}
		portTaken := strings.Contains(procReadFrom(l.logPath, offset), "address already in use")
		if !portTaken || attempt == procStartAttempts {
			l.t.Fatalf("lethe start %d: %v\n%s", l.starts, err, procTail(l.logPath, 15))
		}
	}
}

// launch starts one process on a free port and waits until it is healthy.
func (l *procLethe) launch() error {
	port, err := procFreePort()
	if err != nil {
		return fmt.Errorf("pick a port for lethe: %w", err)
	}
	logFile, err := os.OpenFile(l.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child holds its own descriptor
	l.starts++
	fmt.Fprintf(logFile, "=== start %d on port %d\n", l.starts, port)
	cmd := exec.Command(l.bin, "serve")
	cmd.Env = procLetheEnv(l.dsn, port, l.dataDir)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Should the test binary die, lethe must not outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start lethe: %w", err)
	}
	l.cmd, l.exited = cmd, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(l.exited)
	l.base.Store("http://127.0.0.1:" + strconv.Itoa(port))
	return l.waitHealthy(procStartTimeout)
}

// waitHealthy polls /health until it answers 200, the process exits, or
// the timeout passes.
func (l *procLethe) waitHealthy(timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	for {
		resp, err := client.Get(l.URL() + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-l.exited:
			return fmt.Errorf("lethe exited during start (%s)", l.cmd.ProcessState)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("/health did not answer 200 within %v (last error %w)", timeout, err)
		}
	}
}

// running reports whether the current process has not exited.
func (l *procLethe) running() bool {
	select {
	case <-l.exited:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL and waits until the process is gone.
func (l *procLethe) kill() {
	l.t.Helper()
	if err := l.cmd.Process.Signal(syscall.SIGKILL); err != nil && l.running() {
		l.t.Fatalf("SIGKILL lethe: %v", err)
	}
	select {
	case <-l.exited:
	case <-time.After(10 * time.Second):
		l.t.Fatalf("lethe pid %d still running 10s after SIGKILL", l.PID())
	}
}

// procLetheEnv is a minimal environment, so variables of the machine
// running the tests (DATABASE_URL, PG*, LETHE_*) cannot change the test.
func procLetheEnv(dsn string, port int, dataDir string) []string {
	env := []string{
		"DATABASE_URL=" + dsn,
		"HOST=127.0.0.1",
		"PORT=" + strconv.Itoa(port),
		"LETHE_DATA_DIR=" + dataDir,
		"DB_POOL_SIZE=10",
		"LOG_LEVEL=info",
	}
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// procFreePort asks the kernel for a free loopback port. Another process
// could take it before lethe binds it; start then fails loudly.
func procFreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// procFileSize is the size of path, 0 if it does not exist.
func procFileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// procReadFrom returns the file's content from offset on.
func procReadFrom(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil || offset > int64(len(b)) {
		return ""
	}
	return string(b[offset:])
}

// procTail returns the last n lines of a file, each cut to 300 bytes, for
// failure messages.
func procTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		if len(l) > 300 {
			lines[i] = append(l[:300:300], "..."...)
		}
	}
	return strings.TrimSpace(string(bytes.Join(lines, []byte("\n"))))
}

// procWaitFor polls cond every 20ms until it holds or timeout passes, and
// reports whether it held.
func procWaitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
