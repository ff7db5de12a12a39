package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/validate"
)

// readBody reads the whole request body within the size limit, charging
// the buffer it grows to against the bound on bodies in flight (bodygate.go).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	var charge func(int64) error
	if c := chargeOf(r); c != nil {
		charge = c.take
	}
	body, err := readAll(http.MaxBytesReader(w, r.Body, s.maxBody), min(r.ContentLength, s.maxBody), charge)
	var maxErr *http.MaxBytesError
	var gateErr *apierr.Error
	switch {
	case errors.As(err, &maxErr):
		return nil, apierr.New(apierr.TooLarge, "request body is larger than %d bytes", maxErr.Limit)
	case errors.As(err, &gateErr):
		return nil, err
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, apierr.New(apierr.Invalid, "reading the request body timed out: a body must keep arriving (at most %s without a byte, %s in all); send it at once",
			s.timeouts.BodyIdle, s.timeouts.BodyRead)
	case err != nil:
		return nil, apierr.New(apierr.Invalid, "reading the request body failed: %s", err.Error())
	case len(bytes.TrimSpace(body)) == 0:
		return nil, apierr.New(apierr.Invalid, "request body is empty; send a JSON object")
	}
	return body, nil
}

// The buffer readAll reads a body into: it starts at presizeFirst (or
// the declared length, when smaller; presizeUnknown without one) and, as
// it fills, grows to four times its size (without a declared length:
// twice), capped at the declared length. So what a request holds is at
// most four times what it has sent (and presizeFirst at first), and a
// body of up to presizeFirst is copied into it once, a larger one a few
// times, never io.ReadAll's dozen.
const (
	presizeFirst    = 64 << 10
	presizeUnknown  = 4 << 10
	growDeclared    = 4
	growNotDeclared = 2
)

// readAll is io.ReadAll into a buffer sized from the length the request
// declared (Content-Length; <= 0 is none), where io.ReadAll would grow one
// from 512 bytes, copying a push of 100 KiB about eight times over.
// charge, when not nil, is called with each growth of the buffer before
// it is made; its error ends the read.
func readAll(r io.Reader, declared int64, charge func(int64) error) ([]byte, error) {
	first, factor := int64(presizeUnknown), int64(growNotDeclared)
	if declared > 0 {
		first, factor = min(declared+1, presizeFirst), growDeclared // +1: the read that meets EOF needs room
	}
	if charge != nil {
		if err := charge(first); err != nil {
			return nil, err
		}
	}
	b := make([]byte, 0, first)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			size := int64(cap(b)) * factor
			if declared > 0 && int64(cap(b)) <= declared {
				size = min(size, declared+1)
			}
			if charge != nil {
				if err := charge(size - int64(cap(b))); err != nil {
					return nil, err
				}
			}
			grown := make([]byte, len(b), size)
			copy(grown, b)
			b = grown
		}
	}
}

// decode reads a JSON body into v: exactly one value (trailing bytes are an
// error), within the size limit, holding nothing PostgreSQL cannot store
// (validate.Storable), with type errors described so a person can fix the
// request.
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
			return apierr.New(apierr.Invalid, "malformed JSON at byte %d: %s", syntaxErr.Offset, syntaxErr.Error())
		case errors.As(err, &typeErr):
			field := fieldName(typeErr)
			return apierr.Field(apierr.Invalid, field, "%s must be %s, got a JSON %s", field, typeErr.Type, typeErr.Value)
		default:
			return apierr.New(apierr.Invalid, "malformed JSON: %s", err.Error())
		}
	}
	// After Unmarshal, which reports malformed JSON best: encoding/json
	// turns bad UTF-8 and lone surrogates into U+FFFD silently.
	return validate.Storable(body)
}

func fieldName(e *json.UnmarshalTypeError) string {
	if e.Field == "" {
		return "the body"
	}
	return strings.TrimPrefix(e.Field, ".")
}
