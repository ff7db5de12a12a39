package pgembed

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lethe-mq/lethe/internal/slowstep"
)

// Cluster is a running private PostgreSQL server.
type Cluster struct {
	binDir   string
	port     int
	listen   string // TCP listen_addresses; "" = Unix socket only
	password string // the postgres role's TCP password; "" without TCP
	settings map[string]string
	layout   layout
	run      *runner
	log      *slog.Logger
	lock     *dirLock

	pid         int    // postmaster pid, for stopping it if pg_ctl cannot
	realDataDir string // data folder with symlinks resolved, to recognise that pid

	mu      sync.Mutex
	stopped bool
}

// startAttempts bounds retries of transient start failures: the port we
// picked was taken before postgres could bind it, or children of a killed
// server had not exited yet.
const startAttempts = 3

// Start locks the data folder, prepares it (running initdb the first
// time), starts the server and returns once it accepts connections.
//
// A folder another process holds is refused with an *InUseError before
// anything in it is touched.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	began := time.Now()
	log := cmp.Or(cfg.Logger, slog.Default())
	run, err := newRunner(cfg.OSUser, log)
	if err != nil {
		return nil, err
	}
	root, err := prepareRoot(ctx, run, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	lock, err := lockDir(root)
	if err != nil {
		return nil, err
	}
	c := &Cluster{run: run, log: log, lock: lock, listen: cfg.ListenAddress}
	if err := c.prepare(ctx, cfg, root); err != nil {
		c.release()
		return nil, err
	}
	if err := c.launch(ctx, cfg.Port); err != nil {
		c.release()
		return nil, err
	}
	c.log.Info("pgembed: postgres ready", "dir", root, "socket_dir", c.layout.sockDir,
		"tcp", cmp.Or(c.tcpAddr(), "off"), "took", time.Since(began).Round(time.Millisecond))
	return c, nil
}

// prepare does everything before the server starts: binaries, folders,
// the port check, initdb, a leftover server, pg_hba.conf and the password.
func (c *Cluster) prepare(ctx context.Context, cfg Config, root string) error {
	binDir, err := resolveBinDir(cfg.BinDir)
	if err != nil {
		return err
	}
	if err := c.run.adoptOlderCluster(filepath.Join(root, "data"), c.log); err != nil {
		return err
	}
	if c.layout, err = planLayout(ctx, c.run, root); err != nil {
		return err
	}
	if c.settings, err = serverSettings(cfg, c.layout.sockDir); err != nil {
		return err
	}
	// A busy port is found now, not after initdb.
	if c.listen != "" && cfg.Port != 0 {
		if err := checkPortFree(c.listen, cfg.Port); err != nil {
			return err
		}
	}
	if c.binDir, err = pickBinDir(ctx, c.run, binDir, cfg.BinDir != "", c.layout); err != nil {
		return err
	}
	if cfg.StandbyOf != nil {
		err = ensureStandbyCopy(ctx, c.run, c.binDir, c.layout, cfg.StandbyOf, c.log)
	} else {
		err = ensureInitialized(ctx, c.run, c.binDir, c.layout, cfg.Throwaway, c.log)
	}
	if err != nil {
		return err
	}
	c.realDataDir = c.layout.dataDir()
	if resolved, err := filepath.EvalSymlinks(c.realDataDir); err == nil {
		c.realDataDir = resolved
	}
	if err := clearLeftover(ctx, c, c.log); err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	if err := writeHBA(c.run, c.layout, c.listen != "", cfg.Replication); err != nil {
		return err
	}
	if c.listen == "" {
		return nil
	}
	c.password, err = ensurePassword(c.layout.passwordFile())
	return err
}

func resolveBinDir(dir string) (string, error) {
	if dir == "" {
		return FindBinDir()
	}
	if !hasServerBinaries(dir) {
		return "", fmt.Errorf("pgembed: %s (%s) lacks initdb, pg_ctl or postgres; "+
			"point it at the bin folder of a PostgreSQL server install, or unset it", dir, EnvBinDir)
	}
	return dir, nil
}

// launch starts the server and waits until it accepts connections.
func (c *Cluster) launch(ctx context.Context, port int) error {
	step := slowstep.Begin(c.log, "pgembed: starting PostgreSQL", slowstep.After, "dir", c.layout.root)
	defer step.End()
	for attempt := 1; ; attempt++ {
		c.port = port
		if c.port == 0 && c.listen == "" {
			c.port = socketOnlyPort
		} else if c.port == 0 {
			var err error
			if c.port, err = freePort(); err != nil {
				return fmt.Errorf("pgembed: pick a port: %w", err)
			}
		}
		offset := logSize(c.layout.logFile())
		err := c.pgctlStart(ctx, offset)
		if err == nil {
			c.pid = readPostmasterPID(c.layout.dataDir())
			break
		}
		c.abandon()
		if attempt >= startAttempts || ctx.Err() != nil || !c.retryable(ctx, port, offset) {
			return err
		}
	}
	if err := waitReady(ctx, c.ConnString("postgres")); err != nil {
		c.abandon()
		return fmt.Errorf("pgembed: server started but does not accept connections: %w (server log: %s)",
			err, c.layout.logFile())
	}
	if c.listen != "" {
		if err := setPassword(ctx, c.ConnString("postgres"), c.password); err != nil {
			c.abandon()
			return err
		}
	}
	return nil
}

// retryable reports whether a failed start is worth another attempt, and
// waits where waiting helps.
func (c *Cluster) retryable(ctx context.Context, port int, offset int64) bool {
	failure := logSince(c.layout.logFile(), offset)
	if port == 0 && c.listen != "" && portTaken(failure) {
		c.log.Debug("pgembed: port taken, retrying", "port", c.port)
		return true
	}
	if !oldChildrenLinger(failure) {
		return false
	}
	c.log.Debug("pgembed: processes of a killed server still exiting, retrying")
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Second):
		return true
	}
}

// checkPortFree fails fast, in one line, when a TCP port asked for is in use.
func checkPortFree(listen string, port int) error {
	for _, host := range strings.Split(listen, ",") {
		host = strings.TrimSpace(host)
		if host == "*" {
			host = ""
		}
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return fmt.Errorf("pgembed: cannot listen on %s: %w; is another PostgreSQL running there? choose another port",
				net.JoinHostPort(host, strconv.Itoa(port)), err)
		}
		l.Close()
	}
	return nil
}

// abandon stops a server whose start failed halfway (for instance the
// caller's ctx expired while pg_ctl was waiting), so no orphan keeps
// running. It uses its own deadline because ctx may already be done.
func (c *Cluster) abandon() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c.pgctlRunning(ctx) {
		if err := c.pgctlStop(ctx); err != nil {
			c.log.Warn("pgembed: could not stop half-started server", "err", err)
		}
	}
}

// release gives up what Start took: the temp socket folder and the lock.
func (c *Cluster) release() {
	if c.layout.ownSockDir {
		os.RemoveAll(c.layout.sockDir) // only a dead server's socket can be in it
	}
	c.lock.release()
}

// Stop shuts the server down with a fast shutdown (clients are
// disconnected, committed data is kept) and unlocks the data folder.
// Calling it again is a no-op.
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	if err := c.pgctlStop(ctx); err != nil {
		return err
	}
	c.stopped = true
	c.release()
	c.log.Info("pgembed: postgres stopped", "dir", c.layout.root)
	return nil
}

// ConnString returns a key=value connection string over the Unix socket;
// it needs no password.
func (c *Cluster) ConnString(dbname string) string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable",
		connQuote(c.layout.sockDir), c.port, connQuote(dbname))
}

// URL returns a postgres:// URL, for tools that only take URLs: over TCP
// with the password when a listener is configured, else over the socket.
func (c *Cluster) URL(dbname string) string {
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + dbname}
	q := url.Values{"sslmode": {"disable"}}
	if addr := c.tcpAddr(); addr != "" {
		u.User = url.UserPassword("postgres", c.password)
		u.Host = addr
	} else {
		q.Set("host", c.layout.sockDir)
		q.Set("port", strconv.Itoa(c.port))
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// tcpAddr is host:port of the TCP listener for clients on this machine,
// or "" when there is none.
func (c *Cluster) tcpAddr() string {
	if c.listen == "" {
		return ""
	}
	host, _, _ := strings.Cut(c.listen, ",")
	switch host = strings.TrimSpace(host); host {
	case "*", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, strconv.Itoa(c.port))
}

// Port returns the port: the TCP port when there is a listener, else the
// number in the socket's name.
func (c *Cluster) Port() int { return c.port }

// Dir returns the folder that holds the cluster: Config.DataDir, absolute.
func (c *Cluster) Dir() string { return c.layout.root }

// SocketDir returns the private folder of the server's Unix socket.
func (c *Cluster) SocketDir() string { return c.layout.sockDir }

// OSUser returns the OS user the server runs as: ours, or as root
// Config.OSUser (DefaultOSUser when it is empty).
func (c *Cluster) OSUser() string { return c.run.name }

// LogPath returns the server log file, the first place to look when
// something goes wrong.
func (c *Cluster) LogPath() string { return c.layout.logFile() }
