package engine

import (
	"fmt"

	"github.com/lethe-mq/lethe/internal/apierr"
)

// Kinds of error, as the HTTP layer maps them to status codes (apierr).
var (
	// ErrInvalid is the caller's mistake (400).
	ErrInvalid = apierr.Invalid
	// ErrNotFound names something that does not exist (404).
	ErrNotFound = apierr.NotFound
	// ErrTooLarge is a payload over the configured limit (413).
	ErrTooLarge = apierr.TooLarge
	// ErrConflict is a state the request cannot apply to (409).
	ErrConflict = apierr.Conflict
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func notFoundf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotFound, fmt.Sprintf(format, args...))
}
