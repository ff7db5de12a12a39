package pgembed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxSocketPath is the longest Unix socket path the kernel accepts
// (sun_path is 108 bytes including the terminating NUL).
const maxSocketPath = 107

// socketFileLen is len("/.s.PGSQL.65535"), the file PostgreSQL puts in its
// socket folder for the longest possible port.
const socketFileLen = len("/.s.PGSQL.65535")

// shellUnsafe are characters pg_ctl cannot pass through its /bin/sh
// command line (it only wraps paths in double quotes), plus the comma that
// splits unix_socket_directories.
const shellUnsafe = "\"$`\\\n,"

// layout is where a cluster's files actually live.
type layout struct {
	root       string // holds data/ and pg.log: DataDir, or a temp fallback
	sockDir    string // folder for the Unix socket
	ownSockDir bool   // sockDir is a separate temp folder, removed on Stop
}

func (l layout) dataDir() string { return filepath.Join(l.root, "data") }
func (l layout) logFile() string { return filepath.Join(l.root, "pg.log") }

var errUnusable = errors.New("folder not usable by the server's OS user")

// planLayout decides the cluster and socket folders for dataDir, creating
// them and handing them to the cluster owner.
func planLayout(ctx context.Context, r *runner, dataDir string, log *slog.Logger) (layout, error) {
	if dataDir == "" {
		return layout{}, errors.New("pgembed: Config.DataDir is required")
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return layout{}, fmt.Errorf("pgembed: %w", err)
	}
	var l layout
	err = claimDir(ctx, r, abs)
	switch {
	case err == nil:
		l.root = abs
	case errors.Is(err, errUnusable):
		// As root the postgres user may not be able to reach DataDir (say,
		// under /root, mode 700). Opening up the user's folders is not ours
		// to do, so the cluster moves to a temp folder named after DataDir:
		// the same DataDir finds the same cluster on the next start.
		l.root, err = claimTemp(ctx, r, "lethe-pg-"+shortHash(abs))
		if err != nil {
			return layout{}, fmt.Errorf("pgembed: %s is not usable by the server's OS user and no temp folder is either: %w", abs, err)
		}
		log.Info("pgembed: postgres user cannot use DataDir; cluster placed in temp folder",
			"data_dir", abs, "cluster_dir", l.root)
	default:
		return layout{}, fmt.Errorf("pgembed: prepare %s: %w", abs, err)
	}

	// The socket normally sits next to the data, but deep paths overflow
	// sun_path; then use a short folder under the temp dir.
	l.sockDir = l.root
	if len(l.sockDir)+socketFileLen > maxSocketPath {
		l.sockDir, err = claimTemp(ctx, r, "lethe-s-"+shortHash(l.root))
		if err != nil {
			return layout{}, fmt.Errorf("pgembed: socket folder: %w", err)
		}
		l.ownSockDir = true
	}
	return l, nil
}

// claimDir makes dir a folder the cluster owner can use, creating it if
// needed. It only changes the owner of folders that are safe to hand over:
// ones it creates, empty ones, and ones that already hold a cluster of
// ours - never the user's home. It returns errUnusable when the owner
// still cannot enter and write dir.
func claimDir(ctx context.Context, r *runner, dir string) error {
	if strings.ContainsAny(dir, shellUnsafe) {
		return errUnusable
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if !r.can(ctx, "-x", filepath.Dir(dir)) {
		return errUnusable
	}
	switch _, err := os.Lstat(dir); {
	case errors.Is(err, os.ErrNotExist):
		if err := os.Mkdir(dir, 0o700); err != nil {
			return err
		}
		if err := r.chown(dir); err != nil {
			return err
		}
	case err != nil:
		return err
	case !r.owns(dir) && handOverSafe(dir):
		if err := r.chown(dir); err != nil {
			return err
		}
	}
	if !r.can(ctx, "-x", dir) || !r.can(ctx, "-w", dir) {
		return errUnusable
	}
	return nil
}

// handOverSafe reports whether an existing folder may be given to the
// cluster owner.
func handOverSafe(dir string) bool {
	if home, err := os.UserHomeDir(); err == nil && filepath.Clean(home) == dir {
		return false
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "PG_VERSION")); err == nil {
		return true
	}
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF) // empty
}

// claimTemp claims name under the temp dir, falling back to /tmp when
// TMPDIR itself is unreachable or too deep for a socket path.
func claimTemp(ctx context.Context, r *runner, name string) (string, error) {
	var errs []error
	for _, base := range uniq(os.TempDir(), "/tmp") {
		dir := filepath.Join(base, name)
		if len(dir)+socketFileLen > maxSocketPath {
			errs = append(errs, fmt.Errorf("%s: path too long for a socket", dir))
			continue
		}
		if err := claimDir(ctx, r, dir); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", dir, err))
			continue
		}
		return dir, nil
	}
	return "", errors.Join(errs...)
}

// shortHash names temp folders after a path: stable across runs, short
// enough for socket paths.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

func uniq(ss ...string) []string {
	var out []string
	for _, s := range ss {
		s = filepath.Clean(s)
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
