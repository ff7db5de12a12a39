package config

import (
	"fmt"
	"math"
	"strings"
)

// Never, as a number of days, turns an age-out off. In the environment it
// is spelled 0 or off.
const Never = -1

// kind is how a variable's value is written.
type kind int

const (
	text    kind = iota // free text, or one of choices
	whole               // an integer in [min, max]
	decimal             // a decimal number in [minDec, maxDec]
	flag                // true or false
)

// A spec is one environment variable: the one place its default and range
// are written. FromEnv parses by it, Validate checks by it, and the README's
// configuration table must match Variables (a test compares them).
type spec struct {
	name string
	kind kind
	// def is the default as the environment would spell it; "" is none.
	def            string
	min, max       int64
	minDec, maxDec float64
	unit           string
	// never: 0 or off means never (stored as Never).
	never bool
	// exclude is a value in range that is refused, with why.
	exclude    *int64
	excludeWhy string
	choices    []string
	meaning    string
	readBy     string // where it is read when not by this package
}

var migrationLock int64 = 737000

// The variables, in the README's order.
var (
	varPort         = spec{name: "PORT", kind: whole, def: "6632", min: 0, max: 65535, meaning: "HTTP port of the API (0: any free port)"}
	varHost         = spec{name: "HOST", kind: text, meaning: "address the HTTP API listens on; unset, every address (`0.0.0.0`) when credentials are configured or `LETHE_AUTH=none`, else loopback only (`127.0.0.1`)"}
	varDatabaseURL  = spec{name: "DATABASE_URL", kind: text, meaning: "PostgreSQL to use; without it (and without `PG_HOST`) lethe starts an embedded one"}
	varPGHost       = spec{name: "PG_HOST", kind: text, meaning: "Queen's way to name the database: when set (and `DATABASE_URL` is not), lethe connects to `PG_HOST` with the four below"}
	varPGPort       = spec{name: "PG_PORT", kind: whole, def: "5432", min: 1, max: 65535, meaning: "with `PG_HOST`"}
	varPGUser       = spec{name: "PG_USER", kind: text, def: "postgres", meaning: "with `PG_HOST`"}
	varPGPassword   = spec{name: "PG_PASSWORD", kind: text, def: "postgres", meaning: "with `PG_HOST`"}
	varPGDB         = spec{name: "PG_DB", kind: text, def: "postgres", meaning: "with `PG_HOST`"}
	varDataDir      = spec{name: "LETHE_DATA_DIR", kind: text, def: "./lethe-data", meaning: "embedded PostgreSQL and the maintenance-mode push buffer; one lethe per folder"}
	varDBWait       = spec{name: "DATABASE_WAIT_SECONDS", kind: whole, def: "30", min: 0, max: 3600, unit: "s", meaning: "how long start-up retries a database it cannot reach yet (`0`: fail at once)"}
	varPGBinDir     = spec{name: "LETHE_PG_BINDIR", kind: text, meaning: "folder of the PostgreSQL server binaries for the embedded cluster (`initdb`, `pg_ctl`, `postgres`); found on the machine when unset"}
	varPGOSUser     = spec{name: "LETHE_PG_OS_USER", kind: text, def: "lethe-pg", meaning: "when lethe runs as root, the OS user the embedded PostgreSQL runs as (PostgreSQL refuses root), created as a system user if missing; never `postgres`, which another PostgreSQL on the machine runs as and whose processes could reach the cluster's socket"}
	varPGListen     = spec{name: "LETHE_PG_LISTEN", kind: text, meaning: "`host:port` for a TCP listener on the embedded PostgreSQL (unset: Unix socket only); it needs the password in `LETHE_DATA_DIR/postgres.password`"}
	varPoolSize     = spec{name: "DB_POOL_SIZE", kind: whole, def: "40", min: 4, max: 1000, unit: "connections", meaning: "request connections per replica (the retention loop has one more of its own)"}
	varLogLevel     = spec{name: "LOG_LEVEL", kind: text, def: "info", choices: []string{"debug", "info", "warn", "error"}, meaning: "least severe log level written"}
	varLogFormat    = spec{name: "LOG_FORMAT", kind: text, def: "text", choices: []string{"text", "json"}, meaning: "`json` writes one JSON object per log line (structured fields) for log collectors"}
	varMaxPayload   = spec{name: "MAX_PAYLOAD_BYTES", kind: whole, def: "4194304", min: 1024, max: 256 << 20, unit: "bytes", meaning: "largest message payload; larger pushes answer 413"}
	varPopMaxBytes  = spec{name: "POP_MAX_BYTES", kind: whole, def: "16777216", min: 64 << 10, max: 1 << 30, unit: "bytes", meaning: "payload bytes of one pop's answer: a pop stops adding messages once theirs reach this (the first always comes, however large), which bounds what one pop reads and holds; the rest stays for the next pop"}
	varAuthToken    = spec{name: "LETHE_AUTH_TOKEN", kind: text, meaning: "the token of producers and consumers (lethe's write role, which includes read); when it, `LETHE_OPERATOR_TOKEN` or `JWT_ENABLED` is set, every call but health and metrics needs `Authorization: Bearer <token>`"}
	varOperator     = spec{name: "LETHE_OPERATOR_TOKEN", kind: text, meaning: "the operator's token: everything, including what deletes or skips data, which needs it (or an admin JWT) when auth is on (see [docs/api.md](docs/api.md#roles))"}
	varAuthMode     = spec{name: "LETHE_AUTH", kind: text, def: "protected", choices: []string{"protected", "none"}, meaning: "`protected`: with no credentials configured (no token, no JWT) lethe serves loopback only and refuses to listen on other addresses; `none`: serve without authentication on any address, every caller an operator (the start-up log and `/health` say so)"}
	varEncKey       = spec{name: "QUEEN_ENCRYPTION_KEY", kind: text, meaning: "64 hexadecimal characters (an AES-256 key): seals the payloads of queues with `encryptionEnabled`; without it such queues refuse pushes and pops (see [docs/api.md](docs/api.md#encryption-at-rest))"}
	varEncPrevious  = spec{name: "QUEEN_ENCRYPTION_KEY_PREVIOUS", kind: text, meaning: "older keys, comma-separated, that still open what they sealed (key rotation); they seal nothing"}
	varMaxLongPolls = spec{name: "LETHE_MAX_LONG_POLLS", kind: whole, def: "1000", min: 1, max: 1_000_000, unit: "requests", meaning: "pops with `wait=true` waiting at once on one replica; beyond it such a pop answers 503 with `Retry-After`"}
	varMaxBodies    = spec{name: "LETHE_MAX_BODY_BYTES_IN_FLIGHT", kind: whole, def: "134217728", min: 1 << 20, max: 64 << 30, unit: "bytes", meaning: "request bodies one replica holds at once, charged after the caller's credential is checked, for the buffer each body is read into as its bytes arrive (at most four times what it has sent); a request that finds no room waits up to 10 s, then answers 503 with `Retry-After`; one larger than its share takes all of it; the last eighth is kept for operator requests"}
	varPprof        = spec{name: "LETHE_PPROF_ADDR", kind: text, readBy: "lethe serve", meaning: "when set (e.g. `127.0.0.1:6060`), `lethe serve` serves Go's profiler there; a loopback address only (it answers without a credential, and heap profiles hold payloads)"}
	varGOGC         = spec{name: "GOGC", kind: text, def: "400", readBy: "lethe serve", meaning: "Go's collector target; `lethe serve` sets 400 unless `GOGC` is set"}
	varGOMEMLIMIT   = spec{name: "GOMEMLIMIT", kind: text, def: "72MiB", readBy: "lethe serve", meaning: "Go's soft memory limit; `lethe serve` sets 72 MiB unless `GOMEMLIMIT` is set: near it the collector runs sooner than `GOGC` says (at most half the CPU), which keeps a replica's RSS under 96 MiB (the runtime's own pages and the binary come on top of the limit); raise it for a replica that holds many long polls (25 KiB each) or large batches"}
	varURL          = spec{name: "LETHE_URL", kind: text, def: "http://localhost:6632", readBy: "client commands", meaning: "the server the client commands (`push`, `pop`, `status`, ...) talk to; `--server` wins"}
	varContext      = spec{name: "LETHE_CONTEXT", kind: text, readBy: "client commands", meaning: "the context of the CLI's config file (`~/.config/lethe/config.yaml`) to use; `--context` wins"}
	varToken        = spec{name: "LETHE_TOKEN", kind: text, readBy: "client commands", meaning: "the bearer token the client commands send; `--token` wins"}

	varJWTEnabled    = spec{name: "JWT_ENABLED", kind: flag, def: "false", meaning: "accept JWTs as bearer tokens, as Queen does (with or without the static tokens above; see [docs/api.md](docs/api.md#jwt))"}
	varJWTAlgorithm  = spec{name: "JWT_ALGORITHM", kind: text, def: "HS256", meaning: "`HS256`, `RS256` (RS256, RS384 and RS512 tokens), `EdDSA`, or `auto` (whichever a token names, among those a key is set for)"}
	varJWTSecret     = spec{name: "JWT_SECRET", kind: text, meaning: "the HS256 secret"}
	varJWTPublicKey  = spec{name: "JWT_PUBLIC_KEY", kind: text, meaning: "a PEM public key (RSA or Ed25519) that verifies RS256 or EdDSA tokens; wins over `JWT_JWKS_URL`"}
	varJWTJWKSURL    = spec{name: "JWT_JWKS_URL", kind: text, meaning: "a JWKS URL serving the RS256/EdDSA keys by `kid`"}
	varJWTIssuer     = spec{name: "JWT_ISSUER", kind: text, meaning: "when set, a token's `iss` must be this"}
	varJWTAudience   = spec{name: "JWT_AUDIENCE", kind: text, meaning: "when set, a token's `aud` must hold this"}
	varJWTSkew       = spec{name: "JWT_CLOCK_SKEW", kind: whole, def: "30", min: 0, max: 3600, unit: "s", meaning: "tolerance on `exp`, `nbf` and `iat`"}
	varJWTRequireExp = spec{name: "JWT_REQUIRE_EXP", kind: flag, def: "true", meaning: "refuse a JWT without `exp` (401 saying it has no expiry), which would never expire; `false` accepts such tokens, as Queen does"}
	varJWKSRefresh   = spec{name: "JWT_JWKS_REFRESH_INTERVAL", kind: whole, def: "3600", min: 10, max: 604800, unit: "s", meaning: "how long fetched JWKS keys are used before fetching again (a token with an unknown `kid` fetches sooner, at most every 10 s)"}
	varJWKSTimeout   = spec{name: "JWT_JWKS_TIMEOUT_MS", kind: whole, def: "5000", min: 100, max: 60000, unit: "ms", meaning: "timeout of one JWKS fetch"}
	varJWTRoleClaim  = spec{name: "JWT_ROLES_CLAIM", kind: text, def: "role", meaning: "the claim holding one role"}
	varJWTRolesClaim = spec{name: "JWT_ROLES_ARRAY_CLAIM", kind: text, def: "roles", meaning: "the claim holding a list of roles"}
	varJWTRoleAdmin  = spec{name: "JWT_ROLE_ADMIN", kind: text, def: "admin", meaning: "the role value granting lethe's operator role"}
	varJWTRoleWrite  = spec{name: "JWT_ROLE_READ_WRITE", kind: text, def: "read-write", meaning: "the role value granting the write role (and read)"}
	varJWTRoleRead   = spec{name: "JWT_ROLE_READ_ONLY", kind: text, def: "read-only", meaning: "the role value granting the read role"}

	varRetentionEnabled = spec{name: "RETENTION_ENABLED", kind: flag, def: "true", meaning: "run the retention loop on this replica (status and analytics are served either way)"}
	varInterval         = spec{name: "RETENTION_INTERVAL", kind: whole, def: "5000", min: 10, max: 86_400_000, unit: "ms", meaning: "time between retention cycles"}
	varBatchSize        = spec{name: "RETENTION_BATCH_SIZE", kind: whole, def: "1000", min: 1, max: 100_000, unit: "rows", meaning: "most rows one retention step deletes while holding a partition lock (a sweep step also stops at 2 MiB of frames)"}
	varMaxBusy          = spec{name: "RETENTION_MAX_BUSY", kind: decimal, def: "0.5", minDec: 0.01, maxDec: 1, meaning: "share of the time the retention loop may work: after a step that took t it rests t×(1−b)/b; 1 never rests"}
	varLockID           = spec{name: "RETENTION_LOCK_ID", kind: whole, def: "737001", min: math.MinInt64, max: math.MaxInt64, exclude: &migrationLock, excludeWhy: "the migration lock", meaning: "the advisory lock that elects the one replica sweeping a cycle"}
	varMetricsDays      = spec{name: "METRICS_RETENTION_DAYS", kind: whole, def: "90", min: 1, max: 36500, unit: "days", never: true, meaning: "age at which retention history and cycle records are purged"}
	varDLQDays          = spec{name: "DLQ_RETENTION_DAYS", kind: whole, def: "off", min: 1, max: 36500, unit: "days", never: true, meaning: "age (by failure time) at which dead letters are purged"}
	varCleanupDays      = spec{name: "PARTITION_CLEANUP_DAYS", kind: whole, def: "30", min: 1, max: 36500, unit: "days", meaning: "how long a partition must be empty and idle before it is deleted"}
	varCleanupLethe     = spec{name: "LETHE_PARTITION_CLEANUP_ENABLED", kind: flag, def: "true", meaning: "`false` keeps every partition (and subscription) row; wins over the next"}
	varCleanupQueen     = spec{name: "QUEEN_PARTITION_CLEANUP_ENABLED", kind: flag, def: "true", meaning: "Queen's name for the one above"}
	varTierInterval     = spec{name: "RETENTION_TIER_INTERVAL", kind: whole, def: "3600000", min: 1000, max: 86_400_000, unit: "ms", meaning: "time between tier checks (moves to the held area, whole partitions dropped, gauges counted), across replicas; a 1w message lives 7 to 8 days plus this"}
	varDefaultTier      = spec{name: "LETHE_DEFAULT_RETENTION_TIER", kind: text, def: "forever", choices: []string{"1w", "3w", "7w", "7d", "21d", "49d", "forever"}, meaning: "the `retentionTier` of a queue created without one (a configure, or its first push); existing queues keep theirs"}
	varDefaultQuar      = spec{name: "LETHE_DEFAULT_QUARANTINED", kind: text, def: "keep", choices: []string{"keep", "purge"}, meaning: "the `quarantined` option of a queue created without one: `keep` holds dead letters past their partition, `purge` lets them go with it"}
	varTestClock        = spec{name: "LETHE_TEST_CLOCK", kind: flag, def: "false", meaning: "**tests only**: serve `POST /api/v1/test/clock` (move this replica's clock forward) and `POST /api/v1/test/retention/run` (operator role); never in production"}
	varStreamsIdleDays  = spec{name: "STREAMS_STATE_IDLE_DAYS", kind: whole, def: "30", min: 1, max: 36500, unit: "days", meaning: "a streaming query's state key that no cycle has written for this long is purged (reads do not count)"}
	varTracesDays       = spec{name: "TRACES_RETENTION_DAYS", kind: whole, def: "7", min: 1, max: 36500, unit: "days", meaning: "age (by creation time) at which message traces are purged"}
	varParallelism      = spec{name: "RETENTION_PARALLELISM", kind: whole, min: 1, max: 1024, meaning: "accepted for compatibility with Queen's configuration; **has no effect** (one replica sweeps, one step at a time); logged at start when set"}
)

// specs lists every variable in the README's order.
var specs = []spec{
	varPort, varHost, varDatabaseURL, varPGHost, varPGPort, varPGUser, varPGPassword, varPGDB,
	varDataDir, varDBWait, varPGBinDir, varPGOSUser, varPGListen, varPoolSize, varLogLevel, varLogFormat, varMaxPayload, varPopMaxBytes,
	varAuthToken, varOperator, varAuthMode, varEncKey, varEncPrevious, varMaxLongPolls, varMaxBodies,
	varJWTEnabled, varJWTAlgorithm, varJWTSecret, varJWTPublicKey, varJWTJWKSURL, varJWTIssuer, varJWTAudience,
	varJWTSkew, varJWTRequireExp, varJWKSRefresh, varJWKSTimeout, varJWTRoleClaim, varJWTRolesClaim, varJWTRoleAdmin, varJWTRoleWrite, varJWTRoleRead,
	varRetentionEnabled, varInterval, varBatchSize, varMaxBusy, varLockID,
	varTierInterval, varDefaultTier, varDefaultQuar,
	varMetricsDays, varDLQDays, varCleanupDays, varCleanupLethe, varCleanupQueen,
	varStreamsIdleDays, varTracesDays, varParallelism, varTestClock,
	varPprof, varGOGC, varGOMEMLIMIT, varURL, varToken, varContext,
}

// Variable is one environment variable as the README documents it.
type Variable struct {
	Name    string
	Default string // as written in the environment; "" is none
	Range   string // the values accepted; "" is any text
	Meaning string
	// ReadBy is where the variable is read when not by FromEnv.
	ReadBy string
}

// Variables lists every environment variable lethe reads, with its
// default and range, in the README's order.
func Variables() []Variable {
	out := make([]Variable, len(specs))
	for i, s := range specs {
		out[i] = Variable{Name: s.name, Default: s.def, Range: s.rangeText(), Meaning: s.meaning, ReadBy: s.readBy}
	}
	return out
}

// rangeText states what the variable accepts.
func (s spec) rangeText() string {
	switch s.kind {
	case flag:
		return "`true` or `false`"
	case decimal:
		return fmt.Sprintf("`%g` to `%g`", s.minDec, s.maxDec)
	case whole:
		r := fmt.Sprintf("`%d` to `%d`", s.min, s.max)
		if s.min == math.MinInt64 && s.max == math.MaxInt64 {
			r = "any 64-bit integer"
		}
		if s.unit != "" {
			r += " " + s.unit
		}
		if s.exclude != nil {
			r += fmt.Sprintf(" but `%d` (%s)", *s.exclude, s.excludeWhy)
		}
		if s.never {
			r += "; `0` or `off`: never"
		}
		return r
	}
	if len(s.choices) > 0 {
		return "`" + strings.Join(s.choices, "`, `") + "`"
	}
	return ""
}
