package cli

import (
	"context"

	"log/slog"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/internal/app"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/logging"
)

type serveOptions struct {
	cfg config.Server
}

func newServeCmd() *cobra.Command {
	opts := &serveOptions{}
	var port int
	var host, dataDir, dbURL string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a lethe replica (embedded PostgreSQL when no DATABASE_URL is set)",
		Long: `Run a lethe replica on PORT (6632).

With DATABASE_URL (or Queen's PG_HOST, PG_PORT, PG_USER, PG_PASSWORD, PG_DB)
lethe uses that PostgreSQL; any number of replicas may share it. A database
that is not up yet is retried for DATABASE_WAIT_SECONDS (30).

Without, it starts a private PostgreSQL from the binaries installed on this
machine (LETHE_PG_BINDIR names their folder) in LETHE_DATA_DIR (./lethe-data)
and stops it on exit. It listens on a Unix socket only, in a folder only its
OS user can enter; LETHE_PG_LISTEN=host:port adds a TCP listener that needs
the password kept in LETHE_DATA_DIR/postgres.password. One lethe per data
folder: a second one is refused.`,
		Example: `  lethe serve                                   # embedded PostgreSQL in ./lethe-data
  lethe serve --data-dir /var/lib/lethe --port 8080
  DATABASE_URL=postgres://lethe:secret@db:5432/lethe lethe serve`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.FromEnv()
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("port") {
				cfg.Port = port
			}
			if cmd.Flags().Changed("host") {
				cfg.Host = host
			}
			if cmd.Flags().Changed("data-dir") {
				cfg.DataDir = dataDir
			}
			if cmd.Flags().Changed("database-url") {
				cfg.DatabaseURL = dbURL
			}
			opts.cfg = cfg
			if err := opts.Validate(); err != nil {
				return err
			}
			return opts.Run(cmd.Context())
		},
	}
	cmd.Flags().IntVar(&port, "port", 6632, "HTTP port (PORT)")
	cmd.Flags().StringVar(&host, "host", "", "address to listen on (HOST; unset: 0.0.0.0 with credentials or LETHE_AUTH=none, else 127.0.0.1)")
	cmd.Flags().StringVar(&dataDir, "data-dir", "./lethe-data", "folder for the embedded PostgreSQL and the maintenance buffer (LETHE_DATA_DIR)")
	cmd.Flags().StringVar(&dbURL, "database-url", "", "PostgreSQL to use instead of the embedded one (DATABASE_URL)")
	return cmd
}

func (o *serveOptions) Validate() error { return o.cfg.Validate() }

func (o *serveOptions) Run(ctx context.Context) error {
	log, err := logging.New(os.Stderr, logging.Options{Level: o.cfg.LogLevel, Format: o.cfg.LogFormat})
	if err != nil {
		return err
	}
	tuneGC(log)
	if err := startPprof(log); err != nil {
		return err
	}
	a, err := app.Start(ctx, o.cfg, log, app.Options{})
	if err != nil {
		return err
	}
	<-ctx.Done()
	log.Info("shutting down")
	a.Stop(context.Background())
	return nil
}

// tuneGC trades memory for CPU: a broker's heap is mostly short-lived
// request buffers, and collecting at the default GOGC=100 cost a fifth of
// the push path's CPU in profiles. A soft memory limit caps what that
// trade may cost: under load GOGC=400 alone let the heap grow to five
// times the live data (150 MiB RSS at peak); near the limit the collector
// runs sooner instead. 72 MiB leaves room under the 96 MiB peak-RSS goal
// (BENCHMARKS.md) for what the limit does not count (the binary's pages):
// 80 MiB peaked at 95-97.
// GOGC and GOMEMLIMIT in the environment win.
func tuneGC(log *slog.Logger) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
		log.Debug("GOGC set to 400 (set GOGC to override)")
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
		log.Debug("GOMEMLIMIT set to 72MiB (set GOMEMLIMIT to override)")
	}
}

// defaultMemoryLimit is GOMEMLIMIT's default for lethe serve (README).
const defaultMemoryLimit = 72 << 20
