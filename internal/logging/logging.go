// Package logging builds the server's slog.Logger from LOG_LEVEL and
// LOG_FORMAT (read by internal/config), so every replica logs the same way: text for people by
// default, one JSON object per line for log collectors.
package logging

import (
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Formats LOG_FORMAT accepts.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// Options choose the logger. Empty fields take the defaults: level info,
// format text.
type Options struct {
	Level  string // debug, info, warn or error (LOG_LEVEL)
	Format string // text or json (LOG_FORMAT)
}

// New returns a logger writing to w, or an error of one line naming the
// variable and the values it accepts.
func New(w io.Writer, o Options) (*slog.Logger, error) {
	level, err := ParseLevel(o.Level)
	if err != nil {
		return nil, err
	}
	hopts := &slog.HandlerOptions{Level: level}
	switch format := strings.ToLower(cmp.Or(o.Format, FormatText)); format {
	case FormatText:
		return slog.New(slog.NewTextHandler(w, hopts)), nil
	case FormatJSON:
		return slog.New(slog.NewJSONHandler(w, hopts)), nil
	default:
		return nil, fmt.Errorf("LOG_FORMAT must be text or json, got %q", o.Format)
	}
}

// ParseLevel reads LOG_LEVEL; empty is info.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(cmp.Or(s, "info")) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("LOG_LEVEL must be debug, info, warn or error, got %q", s)
}
