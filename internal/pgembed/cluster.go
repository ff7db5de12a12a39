package pgembed

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Cluster is a running private PostgreSQL server.
type Cluster struct {
	binDir   string
	port     int
	settings map[string]string
	layout   layout
	run      *runner
	log      *slog.Logger

	pid         int    // postmaster pid, for stopping it if pg_ctl cannot
	realDataDir string // data folder with symlinks resolved, to recognise that pid

	mu      sync.Mutex
	stopped bool
}

// startAttempts bounds retries of transient start failures: the port we
// picked was taken before postgres could bind it, or children of a killed
// server had not exited yet.
const startAttempts = 3

// Start prepares the cluster folder (running initdb the first time),
// starts the server and returns once it accepts connections.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	began := time.Now()
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	binDir := cfg.BinDir
	if binDir == "" {
		var err error
		if binDir, err = FindBinDir(); err != nil {
			return nil, err
		}
	} else if !hasServerBinaries(binDir) {
		return nil, fmt.Errorf("pgembed: BinDir %s lacks initdb, pg_ctl or postgres", binDir)
	}
	run, err := newRunner()
	if err != nil {
		return nil, err
	}
	lay, err := planLayout(ctx, run, cfg.DataDir, log)
	if err != nil {
		return nil, err
	}
	c := &Cluster{layout: lay, run: run, log: log}
	if c.settings, err = serverSettings(cfg, lay.sockDir); err != nil {
		return nil, err
	}
	if c.binDir, err = pickBinDir(ctx, run, binDir, cfg.BinDir != "", lay); err != nil {
		return nil, err
	}
	if err := ensureInitialized(ctx, run, c.binDir, lay, log); err != nil {
		return nil, err
	}
	if c.realDataDir, err = filepath.EvalSymlinks(lay.dataDir()); err != nil {
		c.realDataDir = lay.dataDir()
	}
	if err := clearLeftover(ctx, c, log); err != nil {
		return nil, fmt.Errorf("pgembed: %w", err)
	}

	for attempt := 1; ; attempt++ {
		c.port = cfg.Port
		if c.port == 0 {
			if c.port, err = freePort(); err != nil {
				return nil, fmt.Errorf("pgembed: pick a port: %w", err)
			}
		}
		offset := logSize(lay.logFile())
		err = c.pgctlStart(ctx)
		if err == nil {
			c.pid = readPostmasterPID(lay.dataDir())
			break
		}
		c.abandon()
		if attempt < startAttempts && ctx.Err() == nil {
			failure := logSince(lay.logFile(), offset)
			if cfg.Port == 0 && portTaken(failure) {
				log.Debug("pgembed: port taken, retrying", "port", c.port)
				continue
			}
			if oldChildrenLinger(failure) {
				log.Debug("pgembed: processes of a killed server still exiting, retrying")
				select {
				case <-ctx.Done():
					return nil, fmt.Errorf("pgembed: %w", ctx.Err())
				case <-time.After(time.Second):
				}
				continue
			}
		}
		return nil, err
	}
	if err := waitReady(ctx, c.ConnString("postgres")); err != nil {
		c.abandon()
		return nil, fmt.Errorf("pgembed: server started but does not accept connections: %w\n%s",
			err, logTail(lay.logFile(), 20))
	}
	log.Info("pgembed: postgres ready", "dir", lay.root, "port", c.port,
		"took", time.Since(began).Round(time.Millisecond))
	return c, nil
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

// Stop shuts the server down with a fast shutdown (clients are
// disconnected, committed data is kept). Calling it again is a no-op.
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
	if c.layout.ownSockDir {
		os.Remove(c.layout.sockDir) // empty once the server is gone; best effort
	}
	c.log.Info("pgembed: postgres stopped", "dir", c.layout.root)
	return nil
}

// ConnString returns a key=value connection string over the Unix socket,
// the fastest path and one that needs no password.
func (c *Cluster) ConnString(dbname string) string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable",
		connQuote(c.clientHost()), c.port, connQuote(dbname))
}

// URL returns a postgres:// URL over TCP on 127.0.0.1, for tools that only
// take URLs.
func (c *Cluster) URL(dbname string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User("postgres"),
		Host:     "127.0.0.1:" + strconv.Itoa(c.port),
		Path:     "/" + dbname,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port returns the TCP port the server listens on.
func (c *Cluster) Port() int { return c.port }

// Dir returns the folder that really holds the cluster (data/ and
// pg.log): Config.DataDir, or the temp folder used when the server's OS
// user cannot reach it.
func (c *Cluster) Dir() string { return c.layout.root }

// LogPath returns the server log file, the first place to look when
// something goes wrong.
func (c *Cluster) LogPath() string { return c.layout.logFile() }

// clientHost is the socket folder clients should use: the first folder of
// unix_socket_directories (a caller may override it), or TCP loopback if
// Unix sockets are switched off.
func (c *Cluster) clientHost() string {
	first, _, _ := strings.Cut(c.settings["unix_socket_directories"], ",")
	first = strings.Trim(strings.TrimSpace(first), `"`)
	if first == "" {
		return "127.0.0.1"
	}
	if !filepath.IsAbs(first) {
		return filepath.Join(c.layout.dataDir(), first)
	}
	return first
}
