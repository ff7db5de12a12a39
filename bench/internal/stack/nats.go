package stack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"
)

// ErrNATSMissing says nats-server is not on PATH.
var ErrNATSMissing = errors.New("nats-server is not installed: run bench/run.sh (it runs apt-get install nats-server) or install it yourself")

// NATS is a nats-server with JetStream on loopback.
type NATS struct {
	URL     string
	Version string
	cmd     *exec.Cmd
	exited  chan struct{}
	logFile *os.File
}

// StartNATS runs nats-server with JetStream file storage in a fresh folder
// under tmpDir, with its default sync policy (data reaches the disk when
// the OS or the periodic sync writes it, not before the publish ack).
func StartNATS(ctx context.Context, tmpDir, logPath string) (*NATS, error) {
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		return nil, ErrNATSMissing
	}
	dir, err := os.MkdirTemp(tmpDir, "nats-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-js", "-sd", filepath.Join(dir, "store"), "-a", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start nats-server: %w", err)
	}
	n := &NATS{URL: fmt.Sprintf("nats://127.0.0.1:%d", port), Version: natsVersion(ctx, bin), cmd: cmd, logFile: logFile, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(n.exited)
		os.RemoveAll(dir)
	}()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return n, nil
		}
		select {
		case <-n.exited:
			return nil, fmt.Errorf("nats-server exited at start (see %s)", logPath)
		default:
		}
		if time.Now().After(deadline) {
			n.Stop()
			return nil, fmt.Errorf("nats-server did not listen within 15 s (see %s)", logPath)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var versionRe = regexp.MustCompile(`v?(\d+\.\d+\.\d+)`)

func natsVersion(ctx context.Context, bin string) string {
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return "unknown"
	}
	if m := versionRe.FindSubmatch(out); m != nil {
		return string(m[1])
	}
	return "unknown"
}

// Stop ends the server and removes its store.
func (n *NATS) Stop() {
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(10 * time.Second):
		_ = n.cmd.Process.Kill()
		<-n.exited
	}
	n.logFile.Close()
}
