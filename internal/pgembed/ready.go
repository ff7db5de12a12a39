package pgembed

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// readyTimeout bounds waiting for the first connection after pg_ctl
// reports the server started; it normally succeeds on the first try.
const readyTimeout = 15 * time.Second

// waitReady connects until the server accepts a session. pg_ctl -w already
// waits for the "ready" mark in postmaster.pid; this proves it end to end
// with the same connection string callers will use.
func waitReady(ctx context.Context, connString string) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgconn.Connect(attempt, connString)
		cancelAttempt()
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}
