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
	DataDir  string            // folder of our own; the cluster lives in DataDir/data; created if missing
	Port     int               // 0 = pick a free loopback port
	BinDir   string            // optional override; else FindBinDir()
	Logger   *slog.Logger      // nil = slog.Default()
	Settings map[string]string // extra `-c key=value` server settings, e.g. max_connections
}

// settingName matches PostgreSQL setting names, including custom
// "extension.name" ones; anything else could smuggle extra arguments.
var settingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

// serverSettings merges the defaults with cfg.Settings (which win).
// fsync stays at its default (on) so benchmarks against this server are honest.
func serverSettings(cfg Config, sockDir string) (map[string]string, error) {
	s := map[string]string{
		"listen_addresses":        "127.0.0.1",
		"max_connections":         "200",
		"unix_socket_directories": sockDir,
	}
	for k, v := range cfg.Settings {
		if !settingName.MatchString(k) {
			return nil, fmt.Errorf("pgembed: invalid setting name %q", k)
		}
		// The port is chosen by Config.Port and reported by Cluster.Port;
		// a second source of truth would make ConnString lie.
		if strings.EqualFold(k, "port") {
			return nil, fmt.Errorf("pgembed: set the port with Config.Port, not Settings")
		}
		s[strings.ToLower(k)] = v
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
