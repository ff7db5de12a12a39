package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/lethe-mq/lethe/api"
	"github.com/lethe-mq/lethe/internal/engine"
)

func errorBody(msg string) api.Error { return api.Error{Error: msg} }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// statusOf maps an error to its HTTP status. It is the only place that does.
func statusOf(err error) int {
	switch {
	case errors.Is(err, engine.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, engine.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, engine.ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, engine.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, context.Canceled):
		return 499
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	msg := err.Error()
	if status >= 500 {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		if status == http.StatusInternalServerError {
			msg = "internal error: " + msg
		}
	}
	writeJSON(w, status, errorBody(msg))
}

// readBody reads the whole request body within the size limit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &maxErr):
		return nil, fmt.Errorf("%w: request body is larger than %d bytes", engine.ErrTooLarge, maxErr.Limit)
	case err != nil:
		return nil, fmt.Errorf("%w: reading the request body: %s", engine.ErrInvalid, err.Error())
	case len(bytes.TrimSpace(body)) == 0:
		return nil, fmt.Errorf("%w: request body is empty; send a JSON object", engine.ErrInvalid)
	}
	return body, nil
}

// decode reads a JSON body into v: exactly one value (trailing bytes are an
// error), within the size limit, with type errors described so a person can
// fix the request.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		var syntaxErr *json.SyntaxError
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syntaxErr):
			return fmt.Errorf("%w: malformed JSON at byte %d: %s", engine.ErrInvalid, syntaxErr.Offset, syntaxErr.Error())
		case errors.As(err, &typeErr):
			return fmt.Errorf("%w: %s must be %s, got a JSON %s", engine.ErrInvalid, fieldName(typeErr), typeErr.Type, typeErr.Value)
		default:
			return fmt.Errorf("%w: malformed JSON: %s", engine.ErrInvalid, err.Error())
		}
	}
	return nil
}

func fieldName(e *json.UnmarshalTypeError) string {
	if e.Field == "" {
		return "the body"
	}
	return strings.TrimPrefix(e.Field, ".")
}
