// Package config reads lethe's server settings from the environment, using
// Queen's variable names where Queen has one so its deployment docs apply.
// Every variable's default and range are written once, in vars.go; a value
// out of range stops lethe at start with one line naming the variable and
// what it accepts.
package config

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lethe-mq/lethe/internal/auth"
	"github.com/lethe-mq/lethe/internal/seal"
)

// Server is everything `lethe serve` needs.
type Server struct {
	Host            string // HOST
	Port            int    // PORT
	DatabaseURL     string // DATABASE_URL, or built from PG_*
	DataDir         string // LETHE_DATA_DIR: the embedded cluster and the maintenance buffer
	PoolSize        int    // DB_POOL_SIZE
	LogLevel        string // LOG_LEVEL
	LogFormat       string // LOG_FORMAT
	MaxPayloadBytes int    // MAX_PAYLOAD_BYTES
	PopMaxBytes     int64  // POP_MAX_BYTES
	AuthToken       string // LETHE_AUTH_TOKEN
	OperatorToken   string // LETHE_OPERATOR_TOKEN
	// AuthNone is LETHE_AUTH=none: no authentication on any address.
	// Otherwise (protected) a replica without credentials serves loopback
	// only.
	AuthNone     bool
	MaxLongPolls int   // LETHE_MAX_LONG_POLLS: pops with wait=true in progress at once (1000)
	MaxBodies    int64 // LETHE_MAX_BODY_BYTES_IN_FLIGHT: request bodies held at once
	// BodyWait is how long a request waits for room under MaxBodies
	// before answering 503; zero is 10 s. Set in code only (tests).
	BodyWait time.Duration
	// EncryptionKeys seal and open the payloads of encrypted queues
	// (QUEEN_ENCRYPTION_KEY, QUEEN_ENCRYPTION_KEY_PREVIOUS); nil: none.
	EncryptionKeys *seal.Keys
	// JWT is Queen's JWT authentication (JWT_*); nil unless JWT_ENABLED.
	JWT *auth.JWTConfig
	// DatabaseWait is how long start-up retries a database it cannot
	// reach yet (DATABASE_WAIT_SECONDS; 0 = fail at once).
	DatabaseWait time.Duration
	PGBinDir     string // LETHE_PG_BINDIR: the embedded PostgreSQL's binaries (else found on the machine)
	PGListen     string // LETHE_PG_LISTEN: host:port for the embedded PostgreSQL's TCP listener (else Unix socket only)
	PGOSUser     string // LETHE_PG_OS_USER: the embedded PostgreSQL's OS user when lethe runs as root
	// DefaultRetentionTier and DefaultQuarantined are a new queue's
	// (LETHE_DEFAULT_RETENTION_TIER in canonical form, LETHE_DEFAULT_QUARANTINED).
	DefaultRetentionTier string
	DefaultQuarantined   string
	// TestClock serves the test-only clock and retention routes
	// (LETHE_TEST_CLOCK).
	TestClock bool

	Retention Retention

	// Notices are lines to log once at start: settings accepted that have
	// no effect.
	Notices []string
}

// Retention is the maintenance loop's settings, named as the environment
// names them (README's configuration table).
type Retention struct {
	Enabled              bool          // RETENTION_ENABLED: run the loop at all
	Interval             time.Duration // RETENTION_INTERVAL, in ms
	TierInterval         time.Duration // RETENTION_TIER_INTERVAL, in ms
	BatchSize            int           // RETENTION_BATCH_SIZE
	MaxBusy              float64       // RETENTION_MAX_BUSY
	LockID               int64         // RETENTION_LOCK_ID
	MetricsRetentionDays int           // METRICS_RETENTION_DAYS; Never keeps
	DLQRetentionDays     int           // DLQ_RETENTION_DAYS; Never keeps
	PartitionCleanupDays int           // PARTITION_CLEANUP_DAYS
	PartitionCleanup     bool          // LETHE_PARTITION_CLEANUP_ENABLED / QUEEN_PARTITION_CLEANUP_ENABLED
	StreamsStateIdleDays int           // STREAMS_STATE_IDLE_DAYS
	TracesRetentionDays  int           // TRACES_RETENTION_DAYS
}

// FromEnv reads the environment. Bad values are errors that name the
// variable and what it accepts, not silent defaults.
func FromEnv() (Server, error) { return fromLookup(os.LookupEnv) }

func fromLookup(lookup func(string) (string, bool)) (Server, error) {
	r := &reader{lookup: lookup}
	c := Server{
		Host:                 r.text(varHost),
		Port:                 int(r.whole(varPort)),
		DatabaseURL:          r.text(varDatabaseURL),
		DataDir:              r.text(varDataDir),
		PoolSize:             int(r.whole(varPoolSize)),
		LogLevel:             r.text(varLogLevel),
		LogFormat:            r.text(varLogFormat),
		MaxPayloadBytes:      int(r.whole(varMaxPayload)),
		PopMaxBytes:          r.whole(varPopMaxBytes),
		AuthToken:            r.text(varAuthToken),
		OperatorToken:        r.text(varOperator),
		MaxLongPolls:         int(r.whole(varMaxLongPolls)),
		MaxBodies:            r.whole(varMaxBodies),
		DatabaseWait:         time.Duration(r.whole(varDBWait)) * time.Second,
		PGBinDir:             r.text(varPGBinDir),
		PGListen:             r.text(varPGListen),
		PGOSUser:             r.text(varPGOSUser),
		DefaultRetentionTier: canonicalTier(r.text(varDefaultTier)),
		DefaultQuarantined:   r.text(varDefaultQuar),
		TestClock:            r.flag(varTestClock),
		Retention: Retention{
			Enabled:              r.flag(varRetentionEnabled),
			Interval:             time.Duration(r.whole(varInterval)) * time.Millisecond,
			TierInterval:         time.Duration(r.whole(varTierInterval)) * time.Millisecond,
			BatchSize:            int(r.whole(varBatchSize)),
			MaxBusy:              r.decimal(varMaxBusy),
			LockID:               r.whole(varLockID),
			MetricsRetentionDays: int(r.whole(varMetricsDays)),
			DLQRetentionDays:     int(r.whole(varDLQDays)),
			PartitionCleanupDays: int(r.whole(varCleanupDays)),
			PartitionCleanup:     r.flag(varCleanupQueen),
			StreamsStateIdleDays: int(r.whole(varStreamsIdleDays)),
			TracesRetentionDays:  int(r.whole(varTracesDays)),
		},
	}
	if r.isSet(varCleanupLethe) {
		c.Retention.PartitionCleanup = r.flag(varCleanupLethe)
	}
	if r.isSet(varParallelism) {
		n := r.whole(varParallelism)
		c.Notices = append(c.Notices, fmt.Sprintf(
			"RETENTION_PARALLELISM=%d has no effect: accepted for compatibility with Queen; one replica sweeps, one step at a time", n))
	}
	keys, err := seal.ParseKeys(r.text(varEncKey), r.text(varEncPrevious))
	if err != nil {
		r.errs = append(r.errs, err.Error())
	}
	c.EncryptionKeys = keys
	c.JWT = jwtFromEnv(r)
	if c.JWT != nil {
		if _, err := auth.New(auth.Config{JWT: c.JWT}); err != nil {
			r.errs = append(r.errs, err.Error())
		}
	}
	c.AuthNone = r.text(varAuthMode) == "none"
	if !r.isSet(varHost) {
		c.Host = DefaultHost(c.Credentials(), c.AuthNone)
	}
	if c.DatabaseURL == "" && r.isSet(varPGHost) {
		c.DatabaseURL = pgURLFromParts(r)
	}
	if len(r.errs) > 0 {
		return c, fmt.Errorf("configuration: %s", strings.Join(r.errs, "; "))
	}
	return c, c.Validate()
}

// Validate checks every number against its variable's range, for a Server
// built in code or changed by flags after FromEnv.
func (c Server) Validate() error {
	r := c.Retention
	for _, v := range []struct {
		spec spec
		n    int64
	}{
		{varPort, int64(c.Port)},
		{varPoolSize, int64(c.PoolSize)},
		{varDBWait, int64(c.DatabaseWait / time.Second)},
		{varMaxLongPolls, int64(c.MaxLongPolls)},
		{varMaxBodies, c.MaxBodies},
		{varMaxPayload, int64(c.MaxPayloadBytes)},
		{varPopMaxBytes, c.PopMaxBytes},
		{varInterval, r.Interval.Milliseconds()},
		{varTierInterval, r.TierInterval.Milliseconds()},
		{varBatchSize, int64(r.BatchSize)},
		{varLockID, r.LockID},
		{varMetricsDays, int64(r.MetricsRetentionDays)},
		{varDLQDays, int64(r.DLQRetentionDays)},
		{varCleanupDays, int64(r.PartitionCleanupDays)},
		{varStreamsIdleDays, int64(r.StreamsStateIdleDays)},
		{varTracesDays, int64(r.TracesRetentionDays)},
	} {
		if !(v.spec.never && v.n == Never) && !v.spec.wholeOK(v.n) {
			return fmt.Errorf("configuration: %s", v.spec.complaint(fmt.Sprint(v.n)))
		}
	}
	if c.AuthNone && c.Credentials() {
		return fmt.Errorf("configuration: LETHE_AUTH=none turns authentication off, but credentials are configured " +
			"(LETHE_AUTH_TOKEN, LETHE_OPERATOR_TOKEN or JWT_ENABLED): unset one or the other")
	}
	if c.PGListen != "" && !validListen(c.PGListen) {
		return fmt.Errorf("configuration: LETHE_PG_LISTEN must be host:port (for example 127.0.0.1:5433), got %q", c.PGListen)
	}
	if !varMaxBusy.decimalOK(r.MaxBusy) {
		return fmt.Errorf("configuration: %s", varMaxBusy.complaint(fmt.Sprint(r.MaxBusy)))
	}
	for _, v := range []struct {
		spec  spec
		value string
	}{{varLogLevel, c.LogLevel}, {varLogFormat, c.LogFormat}, {varAuthMode, c.authMode()}} {
		if !slices.Contains(v.spec.choices, v.value) {
			return fmt.Errorf("configuration: %s", v.spec.complaint(v.value))
		}
	}
	return nil
}

// authMode is LETHE_AUTH as the environment spells it.
func (c Server) authMode() string {
	if c.AuthNone {
		return "none"
	}
	return "protected"
}

// Credentials reports whether any credential is configured: a static
// token or JWTs.
func (c Server) Credentials() bool {
	return c.AuthToken != "" || c.OperatorToken != "" || c.JWT != nil
}

// DefaultHost is HOST when it is not set: every address when callers must
// show a credential or LETHE_AUTH=none says none is needed, else loopback.
func DefaultHost(credentials, authNone bool) string {
	if credentials || authNone {
		return "0.0.0.0"
	}
	return "127.0.0.1"
}

// CheckExposure refuses to serve every caller as an operator off loopback:
// with no credentials configured and LETHE_AUTH not none, lethe listens on
// loopback addresses only. addr is the address the listener got.
func (c Server) CheckExposure(addr net.Addr) error {
	if c.Credentials() || c.AuthNone {
		return nil
	}
	if IsLoopback(addr) {
		return nil
	}
	return fmt.Errorf("configuration: lethe would listen on %s with no credentials configured, serving every caller "+
		"as an operator (who can delete data); set LETHE_AUTH_TOKEN and LETHE_OPERATOR_TOKEN (or JWT_ENABLED), "+
		"or listen on loopback (HOST=127.0.0.1), or set LETHE_AUTH=none to serve without authentication on purpose", addr)
}

// IsLoopback reports whether addr is a TCP address on a loopback
// interface (127.0.0.0/8 or ::1); a wildcard address is not.
func IsLoopback(addr net.Addr) bool {
	a, ok := addr.(*net.TCPAddr)
	return ok && a.IP != nil && a.IP.IsLoopback()
}

// validListen accepts host:port with a port from 1 to 65535.
func validListen(s string) bool {
	host, port, err := net.SplitHostPort(s)
	n, perr := strconv.Atoi(port)
	return err == nil && host != "" && perr == nil && n >= 1 && n <= 65535
}

// canonicalTier writes a tier's day spelling as its week one (7d is 1w).
func canonicalTier(v string) string {
	switch v {
	case "7d":
		return "1w"
	case "21d":
		return "3w"
	case "49d":
		return "7w"
	}
	return v
}

// jwtFromEnv reads Queen's JWT_* variables; nil unless JWT_ENABLED.
func jwtFromEnv(r *reader) *auth.JWTConfig {
	if !r.flag(varJWTEnabled) {
		return nil
	}
	alg := r.text(varJWTAlgorithm)
	for _, a := range []string{auth.AlgHS256, auth.AlgRS256, auth.AlgEdDSA, auth.AlgAuto} {
		if strings.EqualFold(alg, a) {
			alg = a
		}
	}
	return &auth.JWTConfig{
		Algorithm: alg, Secret: r.text(varJWTSecret), PublicKeyPEM: r.text(varJWTPublicKey), JWKSURL: r.text(varJWTJWKSURL),
		Issuer: r.text(varJWTIssuer), Audience: r.text(varJWTAudience),
		ClockSkew:   time.Duration(r.whole(varJWTSkew)) * time.Second,
		JWKSRefresh: time.Duration(r.whole(varJWKSRefresh)) * time.Second,
		JWKSTimeout: time.Duration(r.whole(varJWKSTimeout)) * time.Millisecond,
		RolesClaim:  r.text(varJWTRoleClaim), RolesArrayClaim: r.text(varJWTRolesClaim),
		RoleAdmin: r.text(varJWTRoleAdmin), RoleReadWrite: r.text(varJWTRoleWrite), RoleReadOnly: r.text(varJWTRoleRead),
		AllowNoExpiry: !r.flag(varJWTRequireExp),
	}
}

// Queen's PG_* variables, with Queen's defaults.
func pgURLFromParts(r *reader) string {
	u := url.URL{
		Scheme: "postgres",
		User:   url.UserPassword(r.text(varPGUser), r.text(varPGPassword)),
		Host:   r.text(varPGHost) + ":" + fmt.Sprint(r.whole(varPGPort)),
		Path:   "/" + r.text(varPGDB),
	}
	return u.String()
}
