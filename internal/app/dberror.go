package app

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// dbProblem is why a connection at start failed, in words a user can act
// on, and whether waiting may fix it.
type dbProblem struct {
	cause  string
	advice string
	retry  bool
}

// diagnose turns a driver error (a multi-line dump whose cause is at the
// end) into one cause and what to do about it.
func diagnose(err error) dbProblem {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return diagnoseServer(pgErr)
	}
	msg := err.Error()
	var dnsErr *net.DNSError
	switch {
	case strings.Contains(msg, "server refused TLS connection"):
		return dbProblem{cause: "the server does not offer TLS (SSL)",
			advice: "set sslmode=disable (or prefer) in DATABASE_URL, or turn ssl on in the server"}
	case strings.Contains(msg, "x509:") || strings.Contains(msg, "tls:"):
		return dbProblem{cause: "TLS failed: " + lastClause(msg),
			advice: "check sslmode, sslrootcert and the host name in DATABASE_URL"}
	case errors.Is(err, syscall.ECONNREFUSED):
		return dbProblem{cause: "connection refused", retry: true,
			advice: "is PostgreSQL running and listening there? check the host and port in DATABASE_URL"}
	case errors.Is(err, syscall.ENOENT):
		return dbProblem{cause: "no server socket there", retry: true,
			advice: "is PostgreSQL running? check the host (socket folder) and port in DATABASE_URL"}
	case errors.As(err, &dnsErr):
		return dbProblem{cause: "cannot resolve host " + dnsErr.Name, retry: true,
			advice: "check the host name in DATABASE_URL"}
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return dbProblem{cause: "no answer in time", retry: true,
			advice: "check the host and port in DATABASE_URL and that no firewall drops the connection"}
	}
	return dbProblem{cause: lastClause(msg), advice: "check DATABASE_URL"}
}

func diagnoseServer(e *pgconn.PgError) dbProblem {
	p := dbProblem{cause: e.Message}
	switch e.Code {
	case "28P01":
		p.advice = "check the user and password in DATABASE_URL (or PG_USER, PG_PASSWORD)"
	case "28000":
		p.advice = "check the user in DATABASE_URL, and that the server's pg_hba.conf lets it in from this host"
	case "3D000":
		p.advice = "create the database (createdb), or fix its name in DATABASE_URL (or PG_DB)"
	case "42501":
		p.advice = "grant the user CONNECT on the database"
	case "57P03", "53300", "53000":
		// Starting up, shutting down, in recovery, or out of connections.
		p.advice, p.retry = "wait for the server, or raise DATABASE_WAIT_SECONDS", true
	default:
		p.advice = "check DATABASE_URL and the server's log"
	}
	return p
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// lastClause is the innermost part of a wrapped error message, on one line.
func lastClause(msg string) string {
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if i := strings.LastIndex(last, ": "); i >= 0 && i+2 < len(last) {
		last = last[i+2:]
	}
	return last
}
