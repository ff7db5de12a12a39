package pgembed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// ensureInitialized runs initdb unless the data folder already holds a
// cluster. initdb writes into a staging folder that is renamed into place
// only on success, so a run killed halfway never leaves a half-made
// cluster where a later start would trust it.
func ensureInitialized(ctx context.Context, r *runner, binDir string, l layout, log *slog.Logger) error {
	data := l.dataDir()
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err == nil {
		return nil
	}
	if _, err := os.Stat(data); err == nil {
		return fmt.Errorf("pgembed: %s exists but is not a PostgreSQL data directory (no PG_VERSION); move it away", data)
	}
	staging := filepath.Join(l.root, "data.initdb")
	if err := os.RemoveAll(staging); err != nil {
		return fmt.Errorf("pgembed: remove leftover %s: %w", staging, err)
	}
	start := time.Now()
	out, err := r.command(ctx, l.root, filepath.Join(binDir, "initdb"),
		"-D", staging, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgembed: initdb failed: %w\n%s", err, lastLines(string(out), 20))
	}
	if err := os.Rename(staging, data); err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	log.Info("pgembed: initialized cluster", "data", data, "took", time.Since(start).Round(time.Millisecond))
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
	return "", errors.New("pgembed: " + l.dataDir() + " was created by PostgreSQL " + want +
		" but " + binDir + " holds PostgreSQL " + have +
		"; set Config.BinDir to version " + want + " binaries, or delete the folder to start afresh")
}
