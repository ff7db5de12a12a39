package pgembed

import (
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Config says where and how to run the private server.
type Config struct {
	DataDir string // folder of our own; the cluster lives in DataDir/data; created if missing
	// ListenAddress, when set, opens a TCP listener on it (a host name or
	// IP, "*" for every interface), with password (SCRAM) authentication
	// for the postgres role; Cluster.URL carries the password. Empty (the
	// default): Unix socket only, in a folder only the server's OS user
	// can enter.
	ListenAddress string
	Port          int               // TCP port, and the number in the socket's name; 0 = 5432 without TCP, a free port with
	BinDir        string            // optional override; else FindBinDir()
	Logger        *slog.Logger      // nil = slog.Default()
	Settings      map[string]string // extra `-c key=value` server settings, e.g. max_connections
	// OSUser is the OS user the server runs as when the process runs as
	// root (LETHE_PG_OS_USER), created as a system user when missing;
	// empty: DefaultOSUser. "postgres", the machine's shared PostgreSQL
	// user, is refused. Not root: the server runs as ourselves and this
	// is not read.
	OSUser string
	// Throwaway skips flushing to disk: initdb --no-sync and fsync=off
	// (unless Settings says otherwise). Data survives a crash of the
	// server but not of the machine, so it is for clusters nobody keeps,
	// such as tests'.
	Throwaway bool
	// Replication lets standbys copy and follow this cluster over its Unix
	// socket (pg_hba: local replication connections, trusted like the
	// others there). Off by default.
	Replication bool
	// StandbyOf, on the first start, copies this running primary (which
	// needs Replication) instead of running initdb: the cluster starts as
	// its streaming standby, read-only until Promote. For failover tests.
	StandbyOf *Cluster
}

// socketOnlyPort names the socket when there is no TCP listener: the
// socket folder is ours alone, so the usual port cannot collide.
const socketOnlyPort = 5432

// settingName matches PostgreSQL setting names, including custom
// "extension.name" ones; anything else could smuggle extra arguments.
var settingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

// reservedSettings decide who can reach the server; pgembed owns them
// (through ListenAddress and Port) so that Settings cannot open it up or
// make ConnString lie.
var reservedSettings = []string{"port", "listen_addresses", "unix_socket_directories",
	"unix_socket_permissions", "unix_socket_group", "hba_file", "ident_file"}

// serverSettings merges the defaults (queueSettings, and for a kept
// cluster keptClusterSettings) with cfg.Settings (which win, except for
// the reserved ones). fsync stays at its default (on) so benchmarks
// against this server are honest.
func serverSettings(cfg Config, sockDir string) (map[string]string, error) {
	s := map[string]string{
		"listen_addresses":        cfg.ListenAddress,
		"max_connections":         "200",
		"unix_socket_directories": sockDir,
		"unix_socket_permissions": "0700",
	}
	maps.Copy(s, queueSettings())
	if cfg.Throwaway {
		s["fsync"] = "off"
	} else {
		maps.Copy(s, keptClusterSettings())
	}
	for k, v := range cfg.Settings {
		if !settingName.MatchString(k) {
			return nil, fmt.Errorf("pgembed: invalid setting name %q", k)
		}
		k = strings.ToLower(k)
		if slices.Contains(reservedSettings, k) {
			return nil, fmt.Errorf("pgembed: %s is set by pgembed (Config.ListenAddress and Config.Port), not Settings", k)
		}
		s[k] = v
	}
	return s, nil
}

// postgresOptions renders the server's command line for `pg_ctl -o`.
// pg_ctl pastes it into a /bin/sh command, so every value is shell-quoted.
func postgresOptions(port int, settings map[string]string) string {
	var b strings.Builder
	b.WriteString("-p " + strconv.Itoa(port))
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		b.WriteString(" -c " + shellQuote(k+"="+settings[k]))
	}
	return b.String()
}

// shellQuote wraps s in single quotes, the only quoting /bin/sh never
// interprets inside.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// connQuote quotes a libpq key=value value when it needs it (spaces,
// quotes, backslashes or empty), so paths with odd characters still parse.
func connQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\r'\\") {
		return s
	}
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s + "'"
}
