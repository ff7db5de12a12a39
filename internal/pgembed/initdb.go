package pgembed

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/lethe-mq/lethe/internal/slowstep"
)

// ensureInitialized runs initdb unless the data folder already holds a
// cluster. initdb writes into a staging folder that is renamed into place
// only on success, so a run killed halfway never leaves a half-made
// cluster where a later start would trust it. No authentication method it
// writes is ever used: writeHBA replaces pg_hba.conf before every start.
func ensureInitialized(ctx context.Context, r *runner, binDir string, l layout, noSync bool, log *slog.Logger) error {
	return stageDataDir(r, l, "data.initdb", func(staging string) error {
		step := slowstep.Begin(log, "pgembed: initializing a PostgreSQL cluster (first start)", slowstep.After, "data", l.dataDir())
		args := []string{"-D", staging, "-U", "postgres", "--auth-local=peer", "--auth-host=reject", "-E", "UTF8", "--no-locale"}
		if noSync {
			args = append(args, "--no-sync")
		}
		out, err := r.command(ctx, l.root, filepath.Join(binDir, "initdb"), args...).CombinedOutput()
		step.End()
		if err != nil {
			saved := filepath.Join(l.root, "initdb.log")
			_ = os.WriteFile(saved, out, 0o600)
			return fmt.Errorf("pgembed: initdb failed (%w): %s (full output in %s)", err, keyLine(string(out)), saved)
		}
		return nil
	})
}

// stageDataDir makes the data folder, unless it already holds a cluster,
// by having fill write a staging folder (name, under the root) that is
// renamed into place only when fill succeeds: a run killed halfway never
// leaves a half-made cluster where a later start would trust it.
func stageDataDir(r *runner, l layout, name string, fill func(staging string) error) error {
	data := l.dataDir()
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err == nil {
		return nil
	}
	if _, err := os.Stat(data); err == nil {
		return fmt.Errorf("pgembed: %s exists but is not a PostgreSQL data directory (no PG_VERSION); move it away", data)
	}
	staging := filepath.Join(l.root, name)
	if err := os.RemoveAll(staging); err != nil {
		return fmt.Errorf("pgembed: remove leftover %s: %w", staging, err)
	}
	// Made by us and handed over, so the server's OS user needs no write
	// access to the data folder itself.
	if err := r.privateDir(staging); err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	if err := fill(staging); err != nil {
		return err
	}
	if err := os.Rename(staging, data); err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	return nil
}

var serverVersion = regexp.MustCompile(`\(PostgreSQL\) (\d+)`)

// binMajor returns the major version of the server in binDir, e.g. "15".
func binMajor(ctx context.Context, r *runner, binDir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := r.command(ctx, "/", filepath.Join(binDir, "postgres"), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("pgembed: %s --version: %w", filepath.Join(binDir, "postgres"), err)
	}
	m := serverVersion.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("pgembed: cannot read version from %q", strings.TrimSpace(string(out)))
	}
	return string(m[1]), nil
}

// dataMajor returns the major version that made the data folder, or ""
// when there is no cluster yet.
func dataMajor(l layout) string {
	b, err := os.ReadFile(filepath.Join(l.dataDir(), "PG_VERSION"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// pickBinDir returns binaries that can run the existing data. Data made by
// one major version cannot be opened by another, and machines often have
// several installed; without an explicit BinDir we prefer the matching
// version to failing with an opaque server error.
func pickBinDir(ctx context.Context, r *runner, binDir string, explicit bool, l layout) (string, error) {
	want := dataMajor(l)
	if want == "" {
		return binDir, nil
	}
	have, err := binMajor(ctx, r, binDir)
	if err != nil {
		return "", err
	}
	if have == want {
		return binDir, nil
	}
	if !explicit {
		for _, p := range versionedPatterns {
			dir := strings.Replace(p, "*", want, 1)
			if hasServerBinaries(dir) {
				return dir, nil
			}
		}
	}
	return "", &VersionMismatchError{DataDir: l.dataDir(), DataVersion: want, BinDir: binDir, BinVersion: have, Explicit: explicit}
}

// EnvBinDir is the environment variable lethe reads for the folder of the
// PostgreSQL server binaries (config.Server.PGBinDir).
const EnvBinDir = "LETHE_PG_BINDIR"

// VersionMismatchError says the cluster was made by another major version
// of PostgreSQL than the binaries at hand can open.
type VersionMismatchError struct {
	DataDir, DataVersion string
	BinDir, BinVersion   string
	Explicit             bool // BinDir was given, not found
}

func (e *VersionMismatchError) Error() string {
	source := "the PostgreSQL binaries found in " + e.BinDir
	if e.Explicit {
		source = "the binaries in " + e.BinDir
	}
	return fmt.Sprintf("pgembed: the cluster in %s was made by PostgreSQL %s, but %s are PostgreSQL %s; "+
		"install PostgreSQL %s's server binaries and set %s to their folder (for example /usr/lib/postgresql/%s/bin), "+
		"or upgrade the cluster to %s with pg_upgrade",
		e.DataDir, e.DataVersion, source, e.BinVersion, e.DataVersion, EnvBinDir, e.DataVersion, e.BinVersion)
}
