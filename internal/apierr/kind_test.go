package apierr

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestStatusOfEveryKind(t *testing.T) {
	t.Parallel()
	want := map[Kind]int{
		Internal: 500, Invalid: 400, Unauthorized: 401, Forbidden: 403, NotFound: 404, MethodNotAllowed: 405,
		Conflict: 409, TooLarge: 413, Unavailable: 503, Canceled: 499,
	}
	for k, status := range want {
		if got := k.Status(); got != status {
			t.Errorf("%v.Status() = %d, want %d", k, got, status)
		}
	}
	if len(want) != len(kinds) {
		t.Errorf("the test names %d kinds, the package has %d", len(want), len(kinds))
	}
	if got := Kind(99).Status(); got != 500 {
		t.Errorf("an unknown kind answers %d, want 500", got)
	}
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		err  error
		want Kind
	}{
		{"wrapped kind", fmt.Errorf("configure q: %w", fmt.Errorf("%w: bad", Invalid)), Invalid},
		{"field error", fmt.Errorf("push: %w", Field(TooLarge, "items[0].payload", "too big")), TooLarge},
		{"plain error", errors.New("boom"), Internal},
		{"body over limit", fmt.Errorf("read: %w", &http.MaxBytesError{Limit: 10}), TooLarge},
		{"caller gone", fmt.Errorf("pop: %w", context.Canceled), Canceled},
		{"deadline", fmt.Errorf("pop: %w", context.DeadlineExceeded), Unavailable},
		{"admin shutdown", fmt.Errorf("pop: %w", &pgconn.PgError{Code: "57P01"}), Unavailable},
		{"cannot connect now", &pgconn.PgError{Code: "57P03"}, Unavailable},
		{"connection failure", &pgconn.PgError{Code: "08006"}, Unavailable},
		{"too many connections", &pgconn.PgError{Code: "53300"}, Unavailable},
		{"read-only standby", &pgconn.PgError{Code: "25006"}, Unavailable},
		{"refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), Unavailable},
		{"net error", &net.OpError{Op: "dial", Err: errors.New("no route")}, Unavailable},
		{"conn closed", fmt.Errorf("query: %w", pgconn.ErrConnClosed), Unavailable},
		{"not UTF-8", &pgconn.PgError{Code: "22021"}, Invalid},
		{"NUL in text", &pgconn.PgError{Code: "22P05"}, Invalid},
		{"unique violation", &pgconn.PgError{Code: "23505"}, Internal},
		{"syntax error", &pgconn.PgError{Code: "42601"}, Internal},
	} {
		if got := KindOf(c.err); got != c.want {
			t.Errorf("%s: KindOf(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

func TestErrorNamesFieldAndRetry(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("ctx: %w", Field(Invalid, "queue", "queue must not be blank"))
	if !errors.Is(err, Invalid) || FieldOf(err) != "queue" {
		t.Fatalf("Is(Invalid) = %v, FieldOf = %q", errors.Is(err, Invalid), FieldOf(err))
	}
	if got := err.Error(); got != "ctx: invalid request: queue must not be blank" {
		t.Fatalf("Error() = %q", got)
	}
	if RetryAfterOf(err) != RetryAfterDefault {
		t.Fatalf("RetryAfterOf = %v, want the default", RetryAfterOf(err))
	}
	busy := &Error{Kind: Unavailable, Msg: "busy", RetryAfter: time.Second}
	if RetryAfterOf(fmt.Errorf("x: %w", busy)) != time.Second {
		t.Fatal("RetryAfterOf ignored the error's own value")
	}
}
