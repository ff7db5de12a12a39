// Package config reads lethe's server settings from the environment, using
// Queen's variable names where Queen has one so its deployment docs apply.
package config

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Server is everything `lethe serve` needs.
type Server struct {
	Host            string // HOST
	Port            int    // PORT
	DatabaseURL     string // DATABASE_URL, or built from PG_*
	DataDir         string // LETHE_DATA_DIR: the embedded cluster and the maintenance buffer
	PoolSize        int    // DB_POOL_SIZE
	LogLevel        string // LOG_LEVEL
	MaxPayloadBytes int    // MAX_PAYLOAD_BYTES
	AuthToken       string // LETHE_AUTH_TOKEN
	OperatorToken   string // LETHE_OPERATOR_TOKEN
	// DatabaseWait is how long start-up retries a database it cannot
	// reach yet (DATABASE_WAIT_SECONDS, 30; 0 = fail at once).
	DatabaseWait time.Duration
	PGBinDir     string // LETHE_PG_BINDIR: the embedded PostgreSQL's binaries (else found on the machine)
	PGListen     string // LETHE_PG_LISTEN: host:port for the embedded PostgreSQL's TCP listener (else Unix socket only)

	Retention Retention
}

// Retention is the maintenance loop's settings (seed 000's names).
type Retention struct {
	Enabled              bool          // RETENTION_ENABLED (default true): run the loop at all
	Interval             time.Duration // RETENTION_INTERVAL in ms (5000)
	BatchSize            int           // RETENTION_BATCH_SIZE (1000)
	LockID               int64         // RETENTION_LOCK_ID (737001)
	MetricsRetentionDays int           // METRICS_RETENTION_DAYS (90)
	PartitionCleanupDays int           // PARTITION_CLEANUP_DAYS (30)
	PartitionCleanup     bool          // LETHE_PARTITION_CLEANUP_ENABLED / QUEEN_PARTITION_CLEANUP_ENABLED (true)
	Parallelism          int           // RETENTION_PARALLELISM: accepted, has no effect
	DLQRetentionDays     int           // DLQ_RETENTION_DAYS (0 = keep dead letters forever)
}

// FromEnv reads the environment. Bad values are errors that name the
// variable, not silent defaults.
func FromEnv() (Server, error) {
	e := envReader{}
	c := Server{
		Host:            e.str("HOST", "0.0.0.0"),
		Port:            e.int("PORT", 6632),
		DatabaseURL:     os.Getenv("DATABASE_URL"),
		DataDir:         e.str("LETHE_DATA_DIR", "./lethe-data"),
		PoolSize:        e.int("DB_POOL_SIZE", 40),
		LogLevel:        strings.ToLower(e.str("LOG_LEVEL", "info")),
		MaxPayloadBytes: e.int("MAX_PAYLOAD_BYTES", 4<<20),
		AuthToken:       os.Getenv("LETHE_AUTH_TOKEN"),
		OperatorToken:   os.Getenv("LETHE_OPERATOR_TOKEN"),
		DatabaseWait:    time.Duration(e.int("DATABASE_WAIT_SECONDS", 30)) * time.Second,
		PGBinDir:        os.Getenv("LETHE_PG_BINDIR"),
		PGListen:        os.Getenv("LETHE_PG_LISTEN"),
		Retention: Retention{
			Enabled:              e.bool("RETENTION_ENABLED", true),
			Interval:             time.Duration(e.int("RETENTION_INTERVAL", 5000)) * time.Millisecond,
			BatchSize:            e.int("RETENTION_BATCH_SIZE", 1000),
			LockID:               int64(e.int("RETENTION_LOCK_ID", 737001)),
			MetricsRetentionDays: e.int("METRICS_RETENTION_DAYS", 90),
			PartitionCleanupDays: e.int("PARTITION_CLEANUP_DAYS", 30),
			PartitionCleanup:     e.bool("LETHE_PARTITION_CLEANUP_ENABLED", e.bool("QUEEN_PARTITION_CLEANUP_ENABLED", true)),
			Parallelism:          e.int("RETENTION_PARALLELISM", 1),
			DLQRetentionDays:     e.int("DLQ_RETENTION_DAYS", 0),
		},
	}
	if c.DatabaseURL == "" && os.Getenv("PG_HOST") != "" {
		c.DatabaseURL = pgURLFromParts(e)
	}
	if len(e.errs) > 0 {
		return c, fmt.Errorf("configuration: %s", strings.Join(e.errs, "; "))
	}
	return c, c.Validate()
}

// Validate checks ranges.
func (c Server) Validate() error {
	switch {
	case c.Port < 0 || c.Port > 65535:
		return fmt.Errorf("PORT must be between 0 and 65535, got %d", c.Port)
	case c.PoolSize < 4:
		return fmt.Errorf("DB_POOL_SIZE must be at least 4, got %d", c.PoolSize)
	case c.MaxPayloadBytes < 1024:
		return fmt.Errorf("MAX_PAYLOAD_BYTES must be at least 1024, got %d", c.MaxPayloadBytes)
	case c.Retention.Interval < 10*time.Millisecond:
		return fmt.Errorf("RETENTION_INTERVAL must be at least 10 (ms), got %d", c.Retention.Interval.Milliseconds())
	case c.Retention.BatchSize < 1 || c.Retention.BatchSize > 100_000:
		return fmt.Errorf("RETENTION_BATCH_SIZE must be between 1 and 100000, got %d", c.Retention.BatchSize)
	case c.DatabaseWait < 0 || c.DatabaseWait > time.Hour:
		return fmt.Errorf("DATABASE_WAIT_SECONDS must be between 0 (fail at once) and 3600, got %d", int(c.DatabaseWait.Seconds()))
	case c.PGListen != "" && !validListen(c.PGListen):
		return fmt.Errorf("LETHE_PG_LISTEN must be host:port (for example 127.0.0.1:5433), got %q", c.PGListen)
	case c.Retention.DLQRetentionDays < 0:
		return fmt.Errorf("DLQ_RETENTION_DAYS must be 0 (keep) or a number of days, got %d", c.Retention.DLQRetentionDays)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("LOG_LEVEL must be debug, info, warn or error, got %q", c.LogLevel)
	}
	return nil
}

// validListen accepts host:port with a port from 1 to 65535.
func validListen(s string) bool {
	host, port, err := net.SplitHostPort(s)
	n, perr := strconv.Atoi(port)
	return err == nil && host != "" && perr == nil && n >= 1 && n <= 65535
}

// Queen's PG_* variables, with Queen's defaults.
func pgURLFromParts(e envReader) string {
	u := url.URL{
		Scheme: "postgres",
		User:   url.UserPassword(e.str("PG_USER", "postgres"), e.str("PG_PASSWORD", "postgres")),
		Host:   e.str("PG_HOST", "localhost") + ":" + e.str("PG_PORT", "5432"),
		Path:   "/" + e.str("PG_DB", "postgres"),
	}
	return u.String()
}

type envReader struct{ errs []string }

func (e *envReader) str(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}

func (e *envReader) int(key string, def int) int {
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Sprintf("%s must be a whole number, got %q", key, v))
		return def
	}
	return n
}

func (e *envReader) bool(key string, def bool) bool {
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Sprintf("%s must be true or false, got %q", key, v))
		return def
	}
	return b
}
