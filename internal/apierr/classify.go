package apierr

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// KindOf classifies err: the kind it wraps, else what its cause says (a
// database that cannot be reached is Unavailable, a caller that went away
// is Canceled), else Internal.
func KindOf(err error) Kind {
	var k Kind
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &k):
		return k
	case errors.As(err, &maxErr):
		return TooLarge
	case errors.Is(err, context.Canceled):
		return Canceled
	case errors.Is(err, context.DeadlineExceeded), databaseUnavailable(err):
		return Unavailable
	case badValueForDatabase(err):
		return Invalid
	}
	return Internal
}

// databaseUnavailable reports whether err says PostgreSQL cannot be reached
// or cannot serve now: a refused or broken connection, a connection or pool
// timeout, a server shutting down or starting up, too many connections, a
// read-only (standby) server. Such errors are worth retrying later.
func databaseUnavailable(err error) bool {
	// A failed connection attempt first: it may wrap the server's refusal
	// (a PgError such as 55000 "not currently accepting connections").
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return unavailableCode(pgErr.Code)
	}
	var netErr net.Error
	switch {
	case errors.As(err, &netErr):
		return true
	case errors.Is(err, pgconn.ErrConnClosed), pgconn.Timeout(err), pgconn.SafeToRetry(err):
		return true
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}

// unavailableCode tells whether a SQLSTATE means "not now" rather than
// "never": class 08 (connection exception), class 53 (insufficient
// resources: too many connections, disk full, out of memory), 57P01
// admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 57P05
// idle_session_timeout, 25006 read_only_sql_transaction (a standby after a
// failover).
func unavailableCode(code string) bool {
	switch {
	case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "53"):
		return true
	}
	switch code {
	case "57P01", "57P02", "57P03", "57P05", "25006":
		return true
	}
	return false
}

// badValueForDatabase reports errors PostgreSQL raises only for a value it
// cannot store: bytes that are not UTF-8 (22021) and characters text cannot
// hold, such as \u0000 (22P05). Input validation should stop them first;
// this keeps one that slips through a 400, not a 500.
func badValueForDatabase(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "22021" || pgErr.Code == "22P05")
}
