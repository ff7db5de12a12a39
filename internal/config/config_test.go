package config

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/pgembed"
	"github.com/lethe-mq/lethe/internal/retention"
)

// env is a fake environment for fromLookup.
type env map[string]string

func (e env) lookup(k string) (string, bool) { v, ok := e[k]; return v, ok }

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := fromLookup(env{}.lookup)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Retention
	// The packages' own defaults (for a zero Config) are the environment's.
	if c.Port != 6632 || c.Host != "127.0.0.1" || c.AuthNone || c.PoolSize != 40 || c.LogLevel != "info" || c.DataDir != "./lethe-data" ||
		c.MaxPayloadBytes != engine.MaxPayloadBytesDefault || c.DatabaseURL != "" {
		t.Fatalf("server defaults = %+v", c)
	}
	if !r.Enabled || r.Interval != retention.IntervalDefault || r.BatchSize != retention.BatchSizeDefault ||
		r.MaxBusy != retention.MaxBusyDefault || r.LockID != retention.LockIDDefault ||
		r.MetricsRetentionDays != retention.MetricsRetentionDaysDefault || r.DLQRetentionDays != retention.DLQRetentionDaysDefault ||
		r.PartitionCleanupDays != retention.PartitionCleanupDaysDefault || !r.PartitionCleanup {
		t.Fatalf("retention defaults = %+v", r)
	}
	if Never != retention.Never {
		t.Fatalf("config.Never = %d, retention.Never = %d", Never, retention.Never)
	}
	if len(c.Notices) != 0 {
		t.Fatalf("notices with an empty environment: %v", c.Notices)
	}
}

func TestEveryDefaultIsAcceptedByItsOwnRange(t *testing.T) {
	t.Parallel()
	for _, s := range specs {
		if s.def == "" || s.readBy != "" {
			continue
		}
		r := &reader{lookup: env{s.name: s.def}.lookup}
		switch s.kind {
		case whole:
			r.whole(s)
		case decimal:
			r.decimal(s)
		case flag:
			r.flag(s)
		case text:
			r.text(s)
		}
		if len(r.errs) > 0 {
			t.Errorf("default of %s: %v", s.name, r.errs)
		}
	}
}

func TestOutOfRangeValuesAreRefusedInOneLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, value, want string }{
		{"METRICS_RETENTION_DAYS", "999999", "METRICS_RETENTION_DAYS=999999 is not accepted: want 1 to 36500 days; 0 or off: never"},
		{"METRICS_RETENTION_DAYS", "-1", "METRICS_RETENTION_DAYS=-1 is not accepted"},
		{"METRICS_RETENTION_DAYS", "never", "METRICS_RETENTION_DAYS=never is not accepted"},
		{"DLQ_RETENTION_DAYS", "-5", "DLQ_RETENTION_DAYS=-5 is not accepted: want 1 to 36500 days; 0 or off: never"},
		{"PARTITION_CLEANUP_DAYS", "0", "PARTITION_CLEANUP_DAYS=0 is not accepted: want 1 to 36500 days"},
		{"PARTITION_CLEANUP_DAYS", "99999999999999999999", "PARTITION_CLEANUP_DAYS=99999999999999999999 is not accepted"},
		{"RETENTION_INTERVAL", "5", "RETENTION_INTERVAL=5 is not accepted: want 10 to 86400000 ms"},
		{"RETENTION_INTERVAL", "-5000", "RETENTION_INTERVAL=-5000 is not accepted"},
		{"RETENTION_BATCH_SIZE", "0", "RETENTION_BATCH_SIZE=0 is not accepted: want 1 to 100000 rows"},
		{"RETENTION_MAX_BUSY", "0", "RETENTION_MAX_BUSY=0 is not accepted: want 0.01 to 1"},
		{"RETENTION_MAX_BUSY", "1.5", "RETENTION_MAX_BUSY=1.5 is not accepted"},
		{"RETENTION_MAX_BUSY", "NaN", "RETENTION_MAX_BUSY=NaN is not accepted"},
		{"RETENTION_LOCK_ID", "737000", "RETENTION_LOCK_ID=737000 is not accepted: want any 64-bit integer but 737000 (the migration lock)"},
		{"RETENTION_ENABLED", "maybe", "RETENTION_ENABLED=maybe is not accepted: want true or false"},
		{"RETENTION_PARALLELISM", "0", "RETENTION_PARALLELISM=0 is not accepted: want 1 to 1024"},
		{"PORT", "70000", "PORT=70000 is not accepted: want 0 to 65535"},
		{"DB_POOL_SIZE", "2", "DB_POOL_SIZE=2 is not accepted: want 4 to 1000 connections"},
		{"MAX_PAYLOAD_BYTES", "1e9", "MAX_PAYLOAD_BYTES=1e9 is not accepted"},
		{"LOG_LEVEL", "loud", "LOG_LEVEL=loud is not accepted: want debug, info, warn, error"},
		{"LETHE_PARTITION_CLEANUP_ENABLED", "nope", "LETHE_PARTITION_CLEANUP_ENABLED=nope is not accepted"},
	} {
		_, err := fromLookup(env{tc.name: tc.value}.lookup)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s=%s: %v; want one line containing %q", tc.name, tc.value, err, tc.want)
		}
	}
}

func TestNeverIsSpelledZeroOrOff(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"0", "off", "OFF"} {
		c, err := fromLookup(env{"METRICS_RETENTION_DAYS": v, "DLQ_RETENTION_DAYS": v}.lookup)
		if err != nil || c.Retention.MetricsRetentionDays != Never || c.Retention.DLQRetentionDays != Never {
			t.Fatalf("%q: %+v, %v; want Never for both", v, c.Retention, err)
		}
	}
	c, err := fromLookup(env{"METRICS_RETENTION_DAYS": "36500", "DLQ_RETENTION_DAYS": "7"}.lookup)
	if err != nil || c.Retention.MetricsRetentionDays != 36500 || c.Retention.DLQRetentionDays != 7 {
		t.Fatalf("%+v, %v; want 36500 and 7 days", c.Retention, err)
	}
}

func TestSettingsReadAsWritten(t *testing.T) {
	t.Parallel()
	c, err := fromLookup(env{"RETENTION_INTERVAL": "250", "RETENTION_MAX_BUSY": "0.2", "RETENTION_LOCK_ID": "-42",
		"LOG_LEVEL": "DEBUG", "QUEEN_PARTITION_CLEANUP_ENABLED": "false", "PG_HOST": "db", "PG_PORT": "6543"}.lookup)
	if err != nil {
		t.Fatal(err)
	}
	if c.Retention.Interval != 250*time.Millisecond || c.Retention.MaxBusy != 0.2 || c.Retention.LockID != -42 ||
		c.LogLevel != "debug" || c.Retention.PartitionCleanup {
		t.Fatalf("read %+v", c)
	}
	if c.DatabaseURL != "postgres://postgres:postgres@db:6543/postgres" {
		t.Fatalf("DatabaseURL from PG_* = %q", c.DatabaseURL)
	}
	// LETHE_PARTITION_CLEANUP_ENABLED wins over Queen's name.
	c, _ = fromLookup(env{"QUEEN_PARTITION_CLEANUP_ENABLED": "false", "LETHE_PARTITION_CLEANUP_ENABLED": "true"}.lookup)
	if !c.Retention.PartitionCleanup {
		t.Fatal("LETHE_PARTITION_CLEANUP_ENABLED=true did not win over QUEEN_PARTITION_CLEANUP_ENABLED=false")
	}
}

func TestRetentionParallelismIsAcceptedAndSaidToDoNothing(t *testing.T) {
	t.Parallel()
	c, err := fromLookup(env{"RETENTION_PARALLELISM": "4"}.lookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Notices) != 1 || !strings.Contains(c.Notices[0], "RETENTION_PARALLELISM=4 has no effect") {
		t.Fatalf("notices = %v, want one saying RETENTION_PARALLELISM has no effect", c.Notices)
	}
}

func TestValidateChecksAServerBuiltInCode(t *testing.T) {
	t.Parallel()
	c, err := fromLookup(env{}.lookup)
	if err != nil {
		t.Fatal(err)
	}
	c.Retention.MetricsRetentionDays = Never
	if err := c.Validate(); err != nil {
		t.Fatalf("Never: %v", err)
	}
	for name, mod := range map[string]func(*Server){
		"METRICS_RETENTION_DAYS": func(s *Server) { s.Retention.MetricsRetentionDays = -7 },
		"RETENTION_INTERVAL":     func(s *Server) { s.Retention.Interval = time.Millisecond },
		"RETENTION_MAX_BUSY":     func(s *Server) { s.Retention.MaxBusy = 0 },
		"PORT":                   func(s *Server) { s.Port = -1 },
		"LOG_LEVEL":              func(s *Server) { s.LogLevel = "verbose" },
	} {
		bad := c
		mod(&bad)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), name+"=") {
			t.Errorf("%s out of range: Validate = %v", name, err)
		}
	}
}

func TestEncryptionAndJWTSettings(t *testing.T) {
	t.Parallel()
	const key = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	c, err := fromLookup(env{"QUEEN_ENCRYPTION_KEY": key, "JWT_ENABLED": "true", "JWT_SECRET": "s", "JWT_ALGORITHM": "hs256",
		"JWT_AUDIENCE": "lethe", "JWT_CLOCK_SKEW": "5"}.lookup)
	if err != nil {
		t.Fatal(err)
	}
	if !c.EncryptionKeys.On() || c.JWT == nil || c.JWT.Algorithm != "HS256" || c.JWT.Audience != "lethe" ||
		c.JWT.ClockSkew != 5*time.Second || c.JWT.RoleReadWrite != "read-write" || c.JWT.JWKSTimeout != 5*time.Second ||
		c.JWT.AllowNoExpiry {
		t.Fatalf("read %+v, %+v", c.EncryptionKeys, c.JWT)
	}
	if c, err := fromLookup(env{"JWT_ENABLED": "true", "JWT_SECRET": "s", "JWT_REQUIRE_EXP": "false"}.lookup); err != nil || !c.JWT.AllowNoExpiry {
		t.Errorf("JWT_REQUIRE_EXP=false: %+v, %v; want tokens without exp accepted", c.JWT, err)
	}
	if c, err := fromLookup(env{"JWT_SECRET": "s"}.lookup); err != nil || c.JWT != nil {
		t.Errorf("JWT_SECRET without JWT_ENABLED: %+v, %v; want JWTs off, as in Queen", c.JWT, err)
	}
	for _, bad := range []env{
		{"QUEEN_ENCRYPTION_KEY": "abc"},
		{"QUEEN_ENCRYPTION_KEY": key, "QUEEN_ENCRYPTION_KEY_PREVIOUS": key[:10]},
		{"QUEEN_ENCRYPTION_KEY_PREVIOUS": key},
		{"JWT_ENABLED": "true"},
		{"JWT_ENABLED": "true", "JWT_ALGORITHM": "RS256", "JWT_SECRET": "s"},
		{"JWT_ENABLED": "true", "JWT_ALGORITHM": "PS256", "JWT_SECRET": "s"},
		{"JWT_ENABLED": "true", "JWT_SECRET": "s", "JWT_CLOCK_SKEW": "-1"},
		{"JWT_ENABLED": "true", "JWT_SECRET": "s", "JWT_REQUIRE_EXP": "sometimes"},
	} {
		_, err := fromLookup(bad.lookup)
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line refusing it", bad, err)
		}
		for k := range bad {
			if err != nil && !strings.Contains(err.Error(), "QUEEN_ENCRYPTION_KEY") && !strings.Contains(err.Error(), "JWT_") {
				t.Errorf("%v: %q does not name the variable (%s)", bad, err, k)
			}
		}
	}
}

// The embedded PostgreSQL's OS user (as root) defaults to pgembed's own,
// and is read as written.
func TestEmbeddedPostgresOSUser(t *testing.T) {
	t.Parallel()
	c, err := fromLookup(env{}.lookup)
	if err != nil || c.PGOSUser != pgembed.DefaultOSUser {
		t.Fatalf("default LETHE_PG_OS_USER: %q, %v; want %q", c.PGOSUser, err, pgembed.DefaultOSUser)
	}
	if c, err := fromLookup(env{"LETHE_PG_OS_USER": "svc-pg"}.lookup); err != nil || c.PGOSUser != "svc-pg" {
		t.Errorf("LETHE_PG_OS_USER=svc-pg: %q, %v", c.PGOSUser, err)
	}
}

func TestProtectedByDefault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  env
		host string
		none bool
	}{
		{"no credentials: loopback", env{}, "127.0.0.1", false},
		{"a token: every address", env{"LETHE_AUTH_TOKEN": "t"}, "0.0.0.0", false},
		{"an operator token: every address", env{"LETHE_OPERATOR_TOKEN": "o"}, "0.0.0.0", false},
		{"JWTs: every address", env{"JWT_ENABLED": "true", "JWT_SECRET": "s"}, "0.0.0.0", false},
		{"auth none: every address", env{"LETHE_AUTH": "none"}, "0.0.0.0", true},
		{"HOST set is kept", env{"HOST": "10.1.2.3", "LETHE_AUTH_TOKEN": "t"}, "10.1.2.3", false},
	} {
		c, err := fromLookup(tc.env.lookup)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.Host != tc.host || c.AuthNone != tc.none {
			t.Errorf("%s: HOST %q, AuthNone %v; want %q, %v", tc.name, c.Host, c.AuthNone, tc.host, tc.none)
		}
	}
	if _, err := fromLookup(env{"LETHE_AUTH": "off"}.lookup); err == nil || !strings.Contains(err.Error(), "LETHE_AUTH") {
		t.Errorf("LETHE_AUTH=off: %v, want an error naming LETHE_AUTH", err)
	}
	if _, err := fromLookup(env{"LETHE_AUTH": "none", "LETHE_AUTH_TOKEN": "t"}.lookup); err == nil ||
		!strings.Contains(err.Error(), "unset one or the other") {
		t.Errorf("LETHE_AUTH=none with a token: %v, want a refusal", err)
	}
}

func TestCheckExposure(t *testing.T) {
	t.Parallel()
	lo := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6632}
	lo6 := &net.TCPAddr{IP: net.IPv6loopback, Port: 6632}
	any4 := &net.TCPAddr{IP: net.IPv4zero, Port: 6632}
	lan := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 6632}
	open := Server{}
	for _, a := range []net.Addr{lo, lo6} {
		if err := open.CheckExposure(a); err != nil {
			t.Errorf("no credentials on %s: %v", a, err)
		}
	}
	for _, a := range []net.Addr{any4, lan} {
		err := open.CheckExposure(a)
		if err == nil || !strings.Contains(err.Error(), "LETHE_AUTH=none") || !strings.Contains(err.Error(), "LETHE_OPERATOR_TOKEN") {
			t.Errorf("no credentials on %s: %v, want a refusal saying what to set", a, err)
		}
	}
	for _, c := range []Server{{AuthToken: "t"}, {OperatorToken: "o"}, {AuthNone: true}} {
		if err := c.CheckExposure(any4); err != nil {
			t.Errorf("%+v on %s: %v", c, any4, err)
		}
	}
}
