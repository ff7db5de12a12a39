package clienttest_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/app"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var exampleServer struct {
	once sync.Once
	url  string
	err  error
}

// serverURL starts, on first use, one lethe replica that the examples
// share (each uses its own queues). Examples cannot take a *testing.T, so
// it panics when the server cannot start; the replica and its database go
// away with the test binary's PostgreSQL when pgtest.Main returns.
func serverURL() string {
	s := &exampleServer
	s.once.Do(func() {
		dsn, _, err := pgtest.CreateDatabase("client examples")
		if err != nil {
			s.err = err
			return
		}
		cfg, err := config.FromEnv()
		if err != nil {
			s.err = err
			return
		}
		cfg.DatabaseURL = dsn
		cfg.PoolSize = 10
		cfg.Retention.Enabled = false
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			s.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		a, err := app.Start(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Options{Listener: ln})
		if err != nil {
			s.err = err
			return
		}
		s.url = a.URL()
	})
	if s.err != nil {
		panic("start the examples' lethe: " + s.err.Error())
	}
	return s.url
}
