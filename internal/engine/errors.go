package engine

import (
	"errors"
	"fmt"
)

// Kinds of error the HTTP layer maps to status codes in one place.
var (
	// ErrInvalid is the caller's mistake (400).
	ErrInvalid = errors.New("invalid request")
	// ErrNotFound names something that does not exist (404).
	ErrNotFound = errors.New("not found")
	// ErrTooLarge is a payload over the configured limit (413).
	ErrTooLarge = errors.New("too large")
	// ErrConflict is a state the request cannot apply to (409).
	ErrConflict = errors.New("conflict")
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func notFoundf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotFound, fmt.Sprintf(format, args...))
}
