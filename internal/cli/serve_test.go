package cli

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A second `lethe serve` on a data folder in use refuses in one line
// naming the first one's pid, and the first one's PostgreSQL keeps
// running untouched.
func TestSecondServeOnDataFolderIsRefused(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(reachableDir(t), "data")
	first := startLethe(t, dataDir, freePort(t), "serve")
	first.waitHealthy(t)
	pgPID := postmasterPID(t, dataDir)
	// Should the test fail with the first lethe killed, its PostgreSQL
	// must not outlive the test (SIGQUIT: immediate shutdown).
	t.Cleanup(func() {
		// Only if the pid is still that server (a postmaster's working
		// folder is its data folder), not a process that reused it.
		if cwd, err := os.Readlink("/proc/" + strconv.Itoa(pgPID) + "/cwd"); err == nil && cwd == filepath.Join(dataDir, "data") {
			syscall.Kill(pgPID, syscall.SIGQUIT)
		}
	})

	second := startLethe(t, dataDir, freePort(t), "serve")
	err := second.wait(t, time.Minute)
	lines := strings.Split(strings.TrimSpace(second.out.String()), "\n")
	last := lines[len(lines)-1]
	want := "error: LETHE_DATA_DIR " + dataDir + " is in use by another lethe (pid " + strconv.Itoa(first.cmd.Process.Pid) + ")"
	if err == nil || !strings.HasPrefix(last, want) {
		t.Fatalf("second serve: %v; last line %q, want it to start with %q; output:\n%s", err, last, want, second.out.String())
	}

	if got := postmasterPID(t, dataDir); got != pgPID || syscall.Kill(pgPID, 0) != nil {
		t.Fatalf("first lethe's PostgreSQL (pid %d) was touched: pid now %d", pgPID, got)
	}
	if code := health(first.url); code != http.StatusOK {
		t.Fatalf("first lethe after the refused second: /health = %d", code)
	}
	if err := first.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := first.wait(t, time.Minute); err != nil {
		t.Fatalf("first lethe did not exit cleanly: %v\n%s", err, first.out.String())
	}
}

// letheProcess is a lethe run as a separate process: this test binary,
// which TestMain turns into the lethe command.
type letheProcess struct {
	cmd  *exec.Cmd
	url  string
	out  *syncBuffer
	done chan struct{}
	err  error // cmd.Wait's, once done is closed
}

// startLethe starts lethe with args on the embedded PostgreSQL in
// dataDir, serving HTTP on port.
func startLethe(t *testing.T, dataDir string, port int, args ...string) *letheProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "DATABASE_URL" && k != "PG_HOST" && k != "PORT" && k != "HOST" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, execEnv+"="+strings.Join(args, " "), "LETHE_DATA_DIR="+dataDir,
		"HOST=127.0.0.1", "PORT="+strconv.Itoa(port), "RETENTION_ENABLED=false")
	p := &letheProcess{cmd: cmd, url: "http://127.0.0.1:" + strconv.Itoa(port), out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	return p
}

// waitHealthy waits until the process answers /health.
func (p *letheProcess) waitHealthy(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); health(p.url) != http.StatusOK; time.Sleep(50 * time.Millisecond) {
		select {
		case <-p.done:
			t.Fatalf("lethe exited before answering (%v):\n%s", p.err, p.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("lethe did not answer within 3 minutes:\n%s", p.out.String())
		}
	}
}

// wait waits at most d for the process to exit and returns how it did.
func (p *letheProcess) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		t.Fatalf("lethe did not exit within %v:\n%s", d, p.out.String())
		return nil
	}
}

func health(url string) int {
	resp, err := http.Get(url + "/health")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func postmasterPID(t *testing.T, dataDir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// reachableDir is a fresh folder the embedded server's OS user can enter when the
// tests run as root.
func reachableDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lethe-cli-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
