package pgembed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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

// layout is where a cluster's files live: all under root (Config.DataDir),
// except the socket folder when root is too deep for a socket path.
type layout struct {
	root       string // DataDir: data/, pg.log, socket/, the lock and password files
	sockDir    string // folder of the Unix socket, mode 0700, owned by the server's OS user
	ownSockDir bool   // sockDir is a temp folder made for this start, removed on Stop
}

func (l layout) dataDir() string      { return filepath.Join(l.root, "data") }
func (l layout) logFile() string      { return filepath.Join(l.root, "pg.log") }
func (l layout) passwordFile() string { return filepath.Join(l.root, "postgres.password") }

// prepareRoot makes sure the data folder exists (so it can be locked) and
// returns its absolute path. A folder it creates as root stays root's,
// with the server user's group allowed to enter it and nobody else.
func prepareRoot(ctx context.Context, r *runner, dataDir string) (string, error) {
	if dataDir == "" {
		return "", errors.New("pgembed: Config.DataDir is required")
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return "", fmt.Errorf("pgembed: %w", err)
	}
	if strings.ContainsAny(abs, shellUnsafe) {
		return "", fmt.Errorf("pgembed: data folder %q contains a character pg_ctl cannot pass on "+
			"(a double quote, $, `, \\, a comma or a newline); choose another folder", abs)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return "", fmt.Errorf("pgembed: create data folder: %w", err)
	}
	// Refuse before creating anything when the server could not reach it.
	if err := checkReachable(ctx, r, filepath.Dir(abs), abs); err != nil {
		return "", err
	}
	switch err := os.Mkdir(abs, 0o700); {
	case err == nil:
		if r.cred != nil {
			if err := os.Chown(abs, -1, r.gid); err != nil {
				return "", fmt.Errorf("pgembed: %w", err)
			}
			if err := os.Chmod(abs, 0o710); err != nil {
				return "", fmt.Errorf("pgembed: %w", err)
			}
		}
	case errors.Is(err, os.ErrExist):
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("pgembed: data folder %s exists but is not a folder", abs)
		}
		if err := letServerIn(ctx, r, abs); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("pgembed: create data folder: %w", err)
	}
	return abs, nil
}

// letServerIn lets the server's OS user enter an existing data folder of
// root's that is lethe's to manage (empty, or holding lethe's files), by
// giving it the server user's group with search permission. Any other folder
// is left as it is, and refused later with what to do.
func letServerIn(ctx context.Context, r *runner, dir string) error {
	if r.cred == nil || r.can(ctx, "-x", dir) || !lethesFolder(dir) {
		return nil
	}
	if uid, ok := fileOwner(dir); !ok || uid != os.Geteuid() {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	if err := os.Chown(dir, -1, r.gid); err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	if err := os.Chmod(dir, fi.Mode().Perm()|0o010); err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	return nil
}

// lethesFolder reports whether dir is empty or already holds lethe's
// files.
func lethesFolder(dir string) bool {
	for _, name := range []string{lockFileName, "data", "pg.log"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF)
}

// planLayout checks that the server's OS user can use root, and prepares
// the files and folders it writes: the log, and the private socket folder.
// The data never moves: a folder the server cannot reach is refused with
// what to do.
func planLayout(ctx context.Context, r *runner, root string) (layout, error) {
	l := layout{root: root}
	if err := checkReachable(ctx, r, root, root); err != nil {
		return layout{}, err
	}
	if err := r.checkOwner(l.dataDir()); err != nil {
		return layout{}, err
	}
	if err := r.ownedFile(l.logFile()); err != nil {
		return layout{}, fmt.Errorf("pgembed: server log: %w", err)
	}
	sock := filepath.Join(root, "socket")
	if len(sock)+socketFileLen > maxSocketPath {
		// Deep paths overflow sun_path; the socket then lives in a fresh
		// folder under the temp dir, made for this start only.
		var err error
		if sock, err = shortTempDir(); err != nil {
			return layout{}, fmt.Errorf("pgembed: socket folder: %w", err)
		}
		l.ownSockDir = true
	}
	if err := r.privateDir(sock); err != nil {
		if l.ownSockDir {
			os.Remove(sock)
		}
		return layout{}, fmt.Errorf("pgembed: socket folder: %w", err)
	}
	l.sockDir = sock
	return l, nil
}

// checkReachable refuses, in one line saying what to do, a folder (the
// data folder, or the one it is to be made in) that the server's OS user
// cannot enter: as root, say, anything under /root.
func checkReachable(ctx context.Context, r *runner, dir, root string) error {
	if r.can(ctx, "-x", dir) {
		return nil
	}
	blocked := dir
	for _, dir := range ancestors(dir) {
		if !r.can(ctx, "-x", dir) {
			blocked = dir
			break
		}
	}
	msg := fmt.Sprintf("pgembed: the server runs as the %s OS user, which cannot enter %s (%s); "+
		"choose a data folder it can reach (for example /var/lib/lethe), or let it in with `chmod o+x %s`",
		r.name, blocked, describeOwner(blocked), blocked)
	if old := oldTempCluster(root); old != "" {
		msg += fmt.Sprintf("; an older lethe kept this folder's cluster in %s: move its data/ and pg.log into %s", old, root)
	}
	return errors.New(msg)
}

// ancestors lists "/" down to path itself.
func ancestors(path string) []string {
	var out []string
	for p := path; ; p = filepath.Dir(p) {
		out = append(out, p)
		if p == filepath.Dir(p) {
			break
		}
	}
	slices.Reverse(out)
	return out
}

// oldTempCluster finds the cluster an older lethe placed under the temp
// folder when, as root, the server's OS user could not reach root.
func oldTempCluster(root string) string {
	for _, base := range uniq(os.TempDir(), "/tmp") {
		dir := filepath.Join(base, "lethe-pg-"+shortHash(root))
		if _, err := os.Stat(filepath.Join(dir, "data", "PG_VERSION")); err == nil {
			return dir
		}
	}
	return ""
}

// shortTempDir makes a fresh folder whose socket path fits sun_path,
// under TMPDIR or else /tmp.
func shortTempDir() (string, error) {
	var errs []error
	for _, base := range uniq(os.TempDir(), "/tmp") {
		if len(base)+len("/lethe-s-1234567890")+socketFileLen > maxSocketPath {
			errs = append(errs, fmt.Errorf("%s: path too long for a socket", base))
			continue
		}
		dir, err := os.MkdirTemp(base, "lethe-s-")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		return dir, nil
	}
	return "", errors.Join(errs...)
}

// shortHash names the temp folders older lethes used: the same path gave
// the same folder.
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
