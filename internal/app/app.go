// Package app assembles one lethe replica: database (embedded or given),
// migrations, engine, background services and the HTTP server.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/auth"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/httpapi"
	"github.com/lethe-mq/lethe/internal/metrics"
	"github.com/lethe-mq/lethe/internal/pgembed"
	"github.com/lethe-mq/lethe/internal/pushbuffer"
	"github.com/lethe-mq/lethe/internal/retention"
	"github.com/lethe-mq/lethe/internal/streams"
	"github.com/lethe-mq/lethe/internal/traces"
	"github.com/lethe-mq/lethe/internal/version"
)

// App is a running replica.
type App struct {
	Config   config.Server
	Log      *slog.Logger
	Clock    clock.Clock
	Pool     *pgxpool.Pool
	Engine   *engine.Engine
	Server   *httpapi.Server
	Listener net.Listener
	// Retention is the maintenance loop; running unless RETENTION_ENABLED
	// is false, its status and analytics routes are served either way.
	Retention *retention.Service
	// Streams serves the streams API, Traces the message traces; their
	// reclaim rules run in the retention loop.
	Streams *streams.Service
	Traces  *traces.Service

	cluster *pgembed.Cluster
	http    *http.Server
	// cancelRequests ends in-flight requests' contexts (long polls).
	cancelRequests context.CancelFunc
	services       []service
}

// service is a background loop the app starts and stops with itself.
type service interface {
	Start(ctx context.Context) error
	Stop()
}

// Options are what tests inject.
type Options struct {
	Clock clock.Clock
	// Listener, when set, is used instead of listening on HOST:PORT.
	Listener net.Listener
}

// Start brings a replica up and serves until Stop.
func Start(ctx context.Context, cfg config.Server, log *slog.Logger, opts Options) (*App, error) {
	a := &App{Config: cfg, Log: log, Clock: opts.Clock}
	if a.Clock == nil {
		a.Clock = clock.Real{}
	}
	var testClock *clock.Offset
	if cfg.TestClock {
		// LETHE_TEST_CLOCK=1: a clock black-box tests move forward.
		testClock = clock.NewOffset(a.Clock)
		a.Clock = testClock
		log.Warn("LETHE_TEST_CLOCK is on: POST /api/v1/test/clock moves this replica's clock; never use it in production")
	}
	ok := false
	defer func() {
		if !ok {
			a.Stop(context.Background())
		}
	}()
	// A busy port is found before anything slow (initdb) runs.
	a.Listener = opts.Listener
	if a.Listener == nil {
		var err error
		a.Listener, err = net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
		if err != nil {
			return nil, fmt.Errorf("listen on %s:%d: %w (is another lethe running? set PORT)", cfg.Host, cfg.Port, err)
		}
	}
	if err := cfg.CheckExposure(a.Listener.Addr()); err != nil {
		return nil, err
	}
	if err := a.openDatabase(ctx); err != nil {
		return nil, err
	}
	prom := metrics.New(metrics.Config{Pool: a.Pool, Logger: log, Clock: a.Clock})
	a.Engine = engine.New(a.Pool, engine.Config{Clock: a.Clock, Logger: log, MaxPayloadBytes: cfg.MaxPayloadBytes, PopMaxBytes: cfg.PopMaxBytes, Hooks: prom.Hooks(),
		DefaultRetentionTier: cfg.DefaultRetentionTier, DefaultQuarantined: cfg.DefaultQuarantined,
		Keys: cfg.EncryptionKeys})
	if cfg.EncryptionKeys.On() {
		log.Info("payload encryption key loaded", "key_id", cfg.EncryptionKeys.KeyID())
	}
	authn, err := a.authenticator(cfg)
	if err != nil {
		return nil, err
	}
	maint, err := pushbuffer.New(pushbuffer.Config{Engine: a.Engine, Dir: filepath.Join(cfg.DataDir, "buffer"),
		Logger: log, Clock: a.Clock, MaxPayloadBytes: cfg.MaxPayloadBytes})
	if err != nil {
		return nil, err
	}
	prom.Registry().MustRegister(maint.Collectors()...)
	a.services = append(a.services, maint)
	for _, n := range cfg.Notices {
		log.Info(n)
	}
	a.Streams = streams.New(streams.Config{Engine: a.Engine, StateIdleDays: cfg.Retention.StreamsStateIdleDays})
	a.Traces = traces.New(traces.Config{Pool: a.Pool, Clock: a.Clock, RetentionDays: cfg.Retention.TracesRetentionDays,
		Keys: cfg.EncryptionKeys})
	a.Retention = retention.New(a.Pool, retention.Config{Clock: a.Clock, Logger: log,
		Interval: cfg.Retention.Interval, TierInterval: cfg.Retention.TierInterval,
		BatchSize: cfg.Retention.BatchSize, LockID: cfg.Retention.LockID,
		MaxBusy:              cfg.Retention.MaxBusy,
		MetricsRetentionDays: cfg.Retention.MetricsRetentionDays, DLQRetentionDays: cfg.Retention.DLQRetentionDays,
		PartitionCleanupDays: cfg.Retention.PartitionCleanupDays, KeepPartitions: !cfg.Retention.PartitionCleanup,
		Forget: a.Engine.Forget, Reclaimers: a.reclaimers()})
	if err := a.Retention.Register(prom.Registry()); err != nil {
		return nil, fmt.Errorf("register retention metrics: %w", err)
	}
	if err := a.Retention.EnsureLeaves(ctx); err != nil {
		return nil, err
	}
	if cfg.Retention.Enabled {
		a.services = append(a.services, a.Retention)
	}
	hcfg := httpapi.Config{
		Engine:               a.Engine,
		Logger:               log,
		Auth:                 authn,
		Maintenance:          maint,
		Retention:            a.Retention,
		Metrics:              prom.Handler(),
		Observe:              prom.Observe,
		MaxLongPolls:         cfg.MaxLongPolls,
		MaxBodyBytesInFlight: cfg.MaxBodies,
		BodyWait:             cfg.BodyWait,
		Streams:              a.Streams,
		Traces:               a.Traces,
	}
	if testClock != nil {
		hcfg.TestClock = testClock
	}
	a.Server = httpapi.New(hcfg)
	prom.WatchLongPolls(a.Server.LongPolls)
	prom.WatchBodies(a.Server.BodyBytesInFlight)
	for _, s := range a.services {
		if err := s.Start(ctx); err != nil {
			return nil, err
		}
	}
	// Requests run under a context Stop cancels first, so long polls end at
	// once instead of holding shutdown for their whole timeout.
	reqCtx, cancelRequests := context.WithCancel(context.Background())
	a.cancelRequests = cancelRequests
	a.http = a.Server.HTTPServer(func(net.Listener) context.Context { return reqCtx })
	go func() {
		if err := a.http.Serve(a.Listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("HTTP server stopped", "error", err)
		}
	}()
	log.Info("lethe listening", "addr", a.Listener.Addr().String(), "version", version.String(), "auth", authn.Posture())
	switch authn.Posture() {
	case auth.PostureNone:
		log.Warn(httpapi.AuthNoneWarning, "addr", a.Listener.Addr().String())
	case auth.PostureLoopback:
		log.Warn("no credentials configured: serving loopback only, where every local caller is an operator; "+
			"set LETHE_AUTH_TOKEN and LETHE_OPERATOR_TOKEN (or JWT_ENABLED) to serve other hosts", "addr", a.Listener.Addr().String())
	}
	ok = true
	return a, nil
}

// authenticator builds the credentials check: static tokens, and JWTs
// judged by the replica's clock.
func (a *App) authenticator(cfg config.Server) (*auth.Authenticator, error) {
	ac := auth.Config{Token: cfg.AuthToken, OperatorToken: cfg.OperatorToken, None: cfg.AuthNone}
	if cfg.JWT != nil {
		j := *cfg.JWT
		j.Now = a.Clock.Now
		ac.JWT = &j
	}
	authn, err := auth.New(ac)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return authn, nil
}

// reclaimers are the retention loop's rules for the streams' state and
// the traces.
func (a *App) reclaimers() []retention.Reclaimer {
	var out []retention.Reclaimer
	for _, r := range a.Streams.Reclaimers() {
		out = append(out, r)
	}
	return append(out, a.Traces.Reclaimer())
}

// URL is the replica's base URL.
func (a *App) URL() string { return "http://" + a.Listener.Addr().String() }

// Stop shuts the replica down: HTTP first (long polls end), then services,
// engine, pool and the embedded cluster.
func (a *App) Stop(ctx context.Context) {
	if a.http != nil {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		a.cancelRequests()
		_ = a.http.Shutdown(sctx)
		cancel()
	} else if a.Listener != nil {
		a.Listener.Close() // start failed before serving
	}
	for i := len(a.services) - 1; i >= 0; i-- {
		a.services[i].Stop()
	}
	if a.Engine != nil {
		a.Engine.Close()
	}
	if a.Pool != nil {
		a.Pool.Close()
	}
	if a.cluster != nil {
		if err := a.cluster.Stop(ctx); err != nil {
			a.Log.Error("stopping embedded PostgreSQL", "error", err)
		} else {
			a.Log.Info("embedded PostgreSQL stopped")
		}
	}
}
