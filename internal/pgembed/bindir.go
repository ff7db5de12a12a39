package pgembed

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrNoBinaries is returned (wrapped) when no PostgreSQL server binaries
// can be found; callers can test for it to skip or explain.
var ErrNoBinaries = errors.New("pgembed: no PostgreSQL server binaries found " +
	"(looked at `pg_config --bindir`, /usr/lib/postgresql/*/bin, /usr/pgsql-*/bin and PATH for initdb and pg_ctl); " +
	"install the PostgreSQL server binaries (e.g. `apt-get install postgresql`), " +
	"set LETHE_PG_BINDIR to the folder that holds them, " +
	"or set DATABASE_URL to use an existing server")

// versionedPatterns are the package layouts that install several major
// versions side by side: Debian/Ubuntu, then the PGDG RPMs.
var versionedPatterns = []string{
	"/usr/lib/postgresql/*/bin",
	"/usr/pgsql-*/bin",
}

// FindBinDir returns a folder holding initdb, pg_ctl and postgres.
//
// It asks pg_config first (the build the user put on PATH knows best), but
// only trusts it if the server binaries are really there: Debian's
// /usr/bin/pg_config says /usr/bin, which has only client wrappers. Next it
// tries the versioned package folders, newest major version first, and last
// initdb and pg_ctl on PATH.
func FindBinDir() (string, error) {
	if dir, ok := binDirFromPgConfig(); ok {
		return dir, nil
	}
	if dir, ok := newestVersioned(versionedPatterns); ok {
		return dir, nil
	}
	if dir, ok := binDirFromPath(); ok {
		return dir, nil
	}
	return "", ErrNoBinaries
}

// hasServerBinaries reports whether dir can run a cluster: pg_ctl finds
// postgres next to itself, so all three must share the folder.
func hasServerBinaries(dir string) bool {
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return false
		}
	}
	return true
}

func binDirFromPgConfig() (string, bool) {
	path, err := exec.LookPath("pg_config")
	if err != nil {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--bindir").Output()
	if err != nil {
		return "", false
	}
	dir := strings.TrimSpace(string(out))
	return dir, dir != "" && hasServerBinaries(dir)
}

// newestVersioned returns the usable folder with the highest major version
// among those matching patterns.
func newestVersioned(patterns []string) (string, bool) {
	type cand struct {
		dir string
		ver []int
	}
	var cands []cand
	for _, p := range patterns {
		dirs, _ := filepath.Glob(p) // only ErrBadPattern, impossible for our constants
		for _, d := range dirs {
			if v := dirVersion(d); v != nil && hasServerBinaries(d) {
				cands = append(cands, cand{d, v})
			}
		}
	}
	if len(cands) == 0 {
		return "", false
	}
	best := slices.MaxFunc(cands, func(a, b cand) int { return slices.Compare(a.ver, b.ver) })
	return best.dir, true
}

var versionInPath = regexp.MustCompile(`(\d+(?:\.\d+)?)`)

// dirVersion extracts "15" or "9.6" from the folder above bin, as a
// number list so that 10 sorts above 9.6.
func dirVersion(binDir string) []int {
	m := versionInPath.FindString(filepath.Base(filepath.Dir(binDir)))
	if m == "" {
		return nil
	}
	var v []int
	for _, part := range strings.Split(m, ".") {
		n, err := strconv.Atoi(part)
		if err != nil {
			return nil
		}
		v = append(v, n)
	}
	return v
}

func binDirFromPath() (string, bool) {
	if _, err := exec.LookPath("initdb"); err != nil {
		return "", false
	}
	pgctl, err := exec.LookPath("pg_ctl")
	if err != nil {
		return "", false
	}
	// Homebrew and friends put symlinks on PATH; pg_ctl itself resolves
	// them to find postgres, so do the same.
	if resolved, err := filepath.EvalSymlinks(pgctl); err == nil {
		pgctl = resolved
	}
	dir, err := filepath.Abs(filepath.Dir(pgctl))
	if err != nil {
		return "", false
	}
	return dir, hasServerBinaries(dir)
}
