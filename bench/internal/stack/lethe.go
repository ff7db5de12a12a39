package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lethe-mq/lethe/internal/app"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/seal"
)

// Lethe is a running lethe server.
type Lethe struct {
	URL string
	// PprofURL is where the subprocess serves Go's profiler
	// (LETHE_PPROF_ADDR), when it was started with one.
	PprofURL string
	// PID is the process whose memory is lethe's: the subprocess, or this
	// process when lethe runs in-process (then the load generator's memory
	// is counted too). Zero when the server is external.
	PID int

	cmd     *exec.Cmd
	exited  chan struct{}
	app     *app.App
	logFile *os.File
}

// benchEncryptionKey is the QUEEN_ENCRYPTION_KEY the bench's lethe runs
// with, so the encryption scenario can turn encryptionEnabled on: a bench
// key, not a secret.
const benchEncryptionKey = "6c657468652062656e6368206b6579202d206e6f742061207365637265742121"

// LetheEnv is what the bench sets for the server unless the environment
// already says otherwise: quiet logs and, in quick runs only, a retention
// cycle every second instead of every 5 s, so a smoke run does not wait for
// its sweep to start. (The sweep's rate is timed from its first delete
// either way.)
func LetheEnv(quick bool) map[string]string {
	// LETHE_TEST_CLOCK adds the route the tier scenarios start the tier
	// check with (POST /api/v1/test/retention/run; the clock is not moved);
	// a key, so the encryption scenario can turn encryptionEnabled on.
	env := map[string]string{"LOG_LEVEL": "warn", "LETHE_TEST_CLOCK": "true", "QUEEN_ENCRYPTION_KEY": benchEncryptionKey}
	if quick {
		env["RETENTION_INTERVAL"] = "1000"
	}
	return env
}

// BuildLethe compiles cmd/lethe into dir and returns the binary's path.
func BuildLethe(ctx context.Context, dir string) (string, error) {
	root, err := ModuleRoot(ctx)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "lethe")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/lethe")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/lethe: %w\n%s", err, out)
	}
	return bin, nil
}

// ModuleRoot is the folder of lethe's own go.mod. The bench is a module of
// its own in lethe's bench/ folder, run from either folder (the go.work at
// lethe's root makes `go run ./bench` work there), so it is the nearest
// folder at or above the current module's that holds cmd/lethe.
func ModuleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run the bench from lethe's folder (go run ./bench)")
	}
	for dir := filepath.Dir(gomod); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "cmd", "lethe")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no cmd/lethe at or above %s: run the bench from lethe's folder", gomod)
		}
	}
}

// StartLetheProcess runs `bin serve` against dsn on a free loopback port,
// with its local files in dataDir, logging to logPath, and waits until
// /health answers.
func StartLetheProcess(ctx context.Context, bin, dsn, dataDir, logPath string, quick bool) (*Lethe, error) {
	return StartLetheProcessWith(ctx, bin, dsn, dataDir, logPath, quick, false)
}

// StartLetheProcessWith is StartLetheProcess that, when pprof is set, has
// the server serve Go's profiler on another free loopback port
// (LETHE_PPROF_ADDR, overriding one in the environment): -profile's CPU and
// heap profiles come from there.
func StartLetheProcessWith(ctx context.Context, bin, dsn, dataDir, logPath string, quick, pprof bool) (*Lethe, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	pprofAddr := ""
	if pprof {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		pprofAddr = fmt.Sprintf("127.0.0.1:%d", p)
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--database-url", dsn, "--data-dir", dataDir)
	// The load generator sends no token, so the server must not ask for one.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LETHE_AUTH_TOKEN=") && !strings.HasPrefix(kv, "LETHE_OPERATOR_TOKEN=") &&
			(pprofAddr == "" || !strings.HasPrefix(kv, "LETHE_PPROF_ADDR=")) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if pprofAddr != "" {
		cmd.Env = append(cmd.Env, "LETHE_PPROF_ADDR="+pprofAddr)
	}
	for k, v := range LetheEnv(quick) {
		if os.Getenv(k) == "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start lethe: %w", err)
	}
	l := &Lethe{URL: fmt.Sprintf("http://127.0.0.1:%d", port), PID: cmd.Process.Pid, cmd: cmd, logFile: logFile, exited: make(chan struct{})}
	if pprofAddr != "" {
		l.PprofURL = "http://" + pprofAddr
	}
	go func() {
		_ = cmd.Wait()
		close(l.exited)
	}()
	if err := l.waitHealthy(ctx, 60*time.Second); err != nil {
		l.Stop()
		return nil, fmt.Errorf("%w (see %s)", err, logPath)
	}
	return l, nil
}

// StartLetheInProcess runs lethe inside this process with app.Start, on
// clk (nil: the wall clock).
func StartLetheInProcess(ctx context.Context, dsn, dataDir string, log *slog.Logger, quick bool, clk clock.Clock) (*Lethe, error) {
	cfg, err := config.FromEnv() // the server's own defaults, as `lethe serve` would have them
	if err != nil {
		return nil, err
	}
	cfg.Host, cfg.DatabaseURL, cfg.LogLevel, cfg.DataDir = "127.0.0.1", dsn, "warn", dataDir
	cfg.AuthToken, cfg.OperatorToken = "", "" // the load generator sends no token
	if cfg.EncryptionKeys == nil {
		if cfg.EncryptionKeys, err = seal.ParseKeys(benchEncryptionKey, ""); err != nil {
			return nil, err
		}
	}
	if quick && os.Getenv("RETENTION_INTERVAL") == "" {
		cfg.Retention.Interval = time.Second
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	a, err := app.Start(ctx, cfg, log, app.Options{Listener: ln, Clock: clk})
	if err != nil {
		return nil, err
	}
	return &Lethe{URL: a.URL(), PID: os.Getpid(), app: a}, nil
}

// UseLethe points at a server someone else runs.
func UseLethe(ctx context.Context, url string) (*Lethe, error) {
	l := &Lethe{URL: strings.TrimRight(url, "/")}
	return l, l.waitHealthy(ctx, 10*time.Second)
}

func (l *Lethe) waitHealthy(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, l.URL+"/health", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body) // drained for the pool; the status decides
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if l.exited != nil {
			select {
			case <-l.exited:
				return errors.New("lethe exited before answering /health")
			default:
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("lethe at %s did not answer /health within %s", l.URL, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop ends the server: SIGTERM, then SIGKILL after 15 s.
func (l *Lethe) Stop() {
	if l.app != nil {
		l.app.Stop(context.Background())
	}
	if l.cmd != nil {
		_ = l.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-l.exited:
		case <-time.After(15 * time.Second):
			_ = l.cmd.Process.Kill()
			<-l.exited
		}
		l.logFile.Close()
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
