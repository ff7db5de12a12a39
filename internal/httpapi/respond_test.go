package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
)

// failed runs fail for err and returns the answer.
func failed(t *testing.T, err error) (*httptest.ResponseRecorder, api.Error) {
	t.Helper()
	var logged strings.Builder
	s := &Server{log: slog.New(slog.NewTextHandler(&logged, nil))}
	r := httptest.NewRequest("GET", "/x", nil)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, "rid-1"))
	w := httptest.NewRecorder()
	s.fail(w, r, err)
	var body api.Error
	if json.Unmarshal(w.Body.Bytes(), &body) != nil || body.Error == "" || body.RequestID != "rid-1" {
		t.Fatalf("fail(%v) answered %s", err, w.Body)
	}
	if w.Code >= 500 && !strings.Contains(logged.String(), "rid-1") {
		t.Fatalf("a %d was not logged with its request id: %s", w.Code, logged.String())
	}
	return w, body
}

func TestFailHidesServerErrorsAndNamesFields(t *testing.T) {
	t.Parallel()
	secret := `INSERT INTO lethe.segments failed for user=lethe_owner host=db.internal`
	for _, c := range []struct {
		err    error
		status int
		retry  string
	}{
		{fmt.Errorf("append: %w", &pgconn.PgError{Code: "23505", Message: secret}), 500, ""},
		{errors.New(secret), 500, ""},
		{fmt.Errorf("pop: %w", &pgconn.PgError{Code: "57P01", Message: secret}), 503, "5"},
		{fmt.Errorf("%w: %s", apierr.Invalid, "x"), 400, ""},
		{fmt.Errorf("store: %w", &pgconn.PgError{Code: "22021", Message: secret}), 400, ""},
		{&apierr.Error{Kind: apierr.Unavailable, Msg: "limit reached", RetryAfter: time.Second}, 503, "1"},
	} {
		w, body := failed(t, c.err)
		if w.Code != c.status || w.Header().Get("Retry-After") != c.retry {
			t.Errorf("fail(%v) = %d (Retry-After %q), want %d (%q)", c.err, w.Code, w.Header().Get("Retry-After"), c.status, c.retry)
		}
		for _, leak := range []string{"INSERT", "lethe_owner", "db.internal", "SQLSTATE"} {
			if strings.Contains(body.Error, leak) {
				t.Errorf("fail(%v) body %q reveals %q", c.err, body.Error, leak)
			}
		}
	}
	_, body := failed(t, fmt.Errorf("push: %w", apierr.Field(apierr.Invalid, "items[2].queue", "items[2].queue is blank")))
	if body.Field != "items[2].queue" || !strings.Contains(body.Error, "is blank") {
		t.Errorf("a field error answered %+v", body)
	}
	if _, body := failed(t, &apierr.Error{Kind: apierr.Unavailable, Msg: "limit reached"}); !strings.Contains(body.Error, "limit reached") {
		t.Errorf("lethe's own 503 lost its message: %+v", body)
	}
}

func TestRecoverPanicsAnswers500(t *testing.T) {
	t.Parallel()
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil)), ids: newRequestIDs()}
	h := s.withRequestID(s.recoverPanics(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/x", nil))
	var body api.Error
	if w.Code != 500 || json.Unmarshal(w.Body.Bytes(), &body) != nil || strings.Contains(body.Error, "boom") || body.RequestID == "" {
		t.Fatalf("panic answered %d %s", w.Code, w.Body)
	}
}
