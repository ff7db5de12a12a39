package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/validate"
)

// readBody reads the whole request body within the size limit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := readAll(http.MaxBytesReader(w, r.Body, s.maxBody), min(r.ContentLength, s.maxBody, presizeMax))
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &maxErr):
		return nil, apierr.New(apierr.TooLarge, "request body is larger than %d bytes", maxErr.Limit)
	case err != nil:
		return nil, apierr.New(apierr.Invalid, "reading the request body failed: %s", err.Error())
	case len(bytes.TrimSpace(body)) == 0:
		return nil, apierr.New(apierr.Invalid, "request body is empty; send a JSON object")
	}
	return body, nil
}

// presizeMax bounds what a request's declared length makes readBody
// allocate before its bytes arrive, so that idle clients declaring large
// bodies cannot hold the server's memory; a larger body grows from there.
const presizeMax = 1 << 20

// readAll is io.ReadAll into one buffer of the size the request declared
// (Content-Length, capped), where io.ReadAll would grow one from 512
// bytes, copying a push of 100 KiB about eight times over: a pushed payload
// is copied once after the request body (store.Batch.AddMessage). Without a
// declared size it is io.ReadAll.
func readAll(r io.Reader, declared int64) ([]byte, error) {
	if declared <= 0 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, declared+1) // +1: the read that meets EOF needs room
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) { // a body longer than the presize cap
			b = append(b, 0)[:len(b)]
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
