package api

// Health answers GET /health, the liveness probe: the process serves HTTP.
// It never asks the database (GET /ready does).
type Health struct {
	Status        string `json:"status"`
	Engine        string `json:"engine"`
	Version       string `json:"version"`
	UptimeSeconds int64  `json:"uptimeSeconds"`
	// Auth is how callers are admitted: "credentials" (a token or a JWT),
	// "loopback-only" (none configured, so lethe serves loopback only) or
	// "none" (LETHE_AUTH=none: every caller, on any address, is an
	// operator), which Warning then says.
	Auth    string `json:"auth"`
	Warning string `json:"warning,omitempty"`
}

// Ready answers GET /ready, the readiness probe: 200 when the database
// answers and holds every migration of this binary, else 503 with Reason.
type Ready struct {
	Status   string `json:"status"`
	Database string `json:"database"`
	Version  string `json:"version,omitempty"`
	// SchemaVersion is the newest migration applied to the database;
	// BinarySchemaVersion the newest this binary carries.
	SchemaVersion       int `json:"schemaVersion,omitempty"`
	BinarySchemaVersion int `json:"binarySchemaVersion,omitempty"`
	// MissingMigrations are this binary's migrations the database lacks
	// (not ready); UnknownMigrations are applied ones of a newer lethe
	// (still ready: migrations only add).
	MissingMigrations []int  `json:"missingMigrations,omitempty"`
	UnknownMigrations []int  `json:"unknownMigrations,omitempty"`
	Reason            string `json:"reason,omitempty"`
	RequestID         string `json:"requestId,omitempty"`
}
