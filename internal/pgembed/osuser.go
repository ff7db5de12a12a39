package pgembed

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultOSUser is the OS user the server runs as when lethe runs as root
// and Config.OSUser is empty: a system user of lethe's own, created when
// missing, so that no other process of the machine (another PostgreSQL,
// running as postgres) shares the user that may enter the socket folder.
const DefaultOSUser = "lethe-pg"

// EnvOSUser is the environment variable lethe reads for Config.OSUser
// (config.Server.PGOSUser).
const EnvOSUser = "LETHE_PG_OS_USER"

// sharedPostgresUser is the user the machine's own PostgreSQL runs as:
// every process of it could reach our socket, which trusts local
// connections, so the server never runs as it.
const sharedPostgresUser = "postgres"

// osUserName is what useradd accepts on every system we know: no option
// can be smuggled in, nothing a shell would read.
var osUserName = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

// userMu serialises this process's look-ups and creations of the user;
// other processes (test binaries starting at once) may race us to
// useradd, which serverUser survives.
var userMu sync.Mutex

// userAddAttempts bounds the tries to create the user while another
// process holds /etc/passwd's lock or creates it at the same time.
const userAddAttempts = 6

// serverUser looks up the OS user the server runs as, creating it as a
// system user (no home, no login shell) when it does not exist. Another
// process creating it at the same time is success: the user is looked up
// again after every failed creation.
func serverUser(name string, log *slog.Logger) (*user.User, error) {
	if name == sharedPostgresUser {
		return nil, fmt.Errorf("pgembed: %s=%s is refused: the machine's own PostgreSQL runs as postgres, and every process "+
			"of that user could connect to the embedded cluster as its superuser (its socket trusts the user that owns it); "+
			"leave %s unset (lethe creates and uses %s) or name a user of lethe's own", EnvOSUser, name, EnvOSUser, DefaultOSUser)
	}
	if !osUserName.MatchString(name) {
		return nil, fmt.Errorf("pgembed: %s=%q is not an OS user name (lowercase letters, digits, _ and -, at most 32, "+
			"not starting with a digit or -)", EnvOSUser, name)
	}
	userMu.Lock()
	defer userMu.Unlock()
	var failures []string
	for attempt := 1; ; attempt++ {
		u, err := user.Lookup(name)
		if err == nil {
			return u, nil
		}
		if !errors.As(err, new(user.UnknownUserError)) {
			return nil, fmt.Errorf("pgembed: look up OS user %s: %w", name, err)
		}
		if attempt > userAddAttempts {
			return nil, fmt.Errorf("pgembed: running as root, lethe runs the embedded PostgreSQL as the OS user %s, which does not "+
				"exist and could not be created (%s); create it (`%s`), or set %s to an existing user of lethe's own, or run lethe "+
				"as a non-root user", name, strings.Join(failures, "; "), strings.Join(userAddCommand(name, "useradd"), " "), EnvOSUser)
		}
		args, err := addUserOf(name)
		if err == nil {
			log.Info("pgembed: created the OS user the embedded PostgreSQL runs as", "user", name, "command", strings.Join(args, " "))
			continue
		}
		failures = append(failures, err.Error())
		time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
	}
}

// addUserOf is addUser; tests replace it to lose the race to create.
var addUserOf = addUser

// addUser creates name as a system user with the tool the machine has:
// useradd (shadow-utils, on Debian, Fedora, ...), else adduser (Debian's,
// or BusyBox's on Alpine). It answers the command it ran.
func addUser(name string) ([]string, error) {
	tool := ""
	for _, t := range []string{"useradd", "adduser"} {
		if p := findTool(t); p != "" {
			tool = p
			break
		}
	}
	if tool == "" {
		return nil, errors.New("neither useradd nor adduser is installed")
	}
	args := userAddCommand(name, tool)
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return args, fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return args, nil
}

// userAddCommand is the command line that makes name a system user with
// its own group, no home and no login shell.
func userAddCommand(name, tool string) []string {
	shell := "/usr/sbin/nologin"
	for _, s := range []string{"/usr/sbin/nologin", "/sbin/nologin", "/bin/false"} {
		if _, err := os.Stat(s); err == nil {
			shell = s
			break
		}
	}
	switch {
	case filepath.Base(tool) == "useradd":
		return []string{tool, "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent", "--shell", shell, name}
	case isBusyBox(tool):
		return []string{tool, "-S", "-D", "-H", "-h", "/nonexistent", "-s", shell, name}
	}
	return []string{tool, "--system", "--group", "--no-create-home", "--home", "/nonexistent", "--shell", shell, name}
}

// findTool finds a user administration tool on PATH or in the sbin
// folders, which a root shell's PATH does not always hold.
func findTool(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func isBusyBox(tool string) bool {
	resolved, err := filepath.EvalSymlinks(tool)
	return err == nil && filepath.Base(resolved) == "busybox"
}

// adoptOlderCluster hands to the server's user, as root, a cluster an
// older lethe ran as the machine's postgres user: chown -R of the data
// folder, said in the log. A cluster of any other user is left as it is,
// for checkOwner to refuse.
func (r *runner) adoptOlderCluster(dataDir string, log *slog.Logger) error {
	if r.cred == nil {
		return nil
	}
	uid, ok := fileOwner(dataDir)
	if !ok || uid == r.uid {
		return nil
	}
	pg, err := user.Lookup(sharedPostgresUser)
	if err != nil || pg.Uid != strconv.Itoa(uid) {
		return nil
	}
	log.Warn("pgembed: the cluster belongs to the postgres OS user (an older lethe ran it so); handing it to the server's own user",
		"data", dataDir, "user", r.name, "command", "chown -R "+r.name+" "+dataDir)
	err = filepath.WalkDir(dataDir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, r.uid, r.gid)
	})
	if err != nil {
		return fmt.Errorf("pgembed: hand %s to OS user %s: %w; run `chown -R %s: %s`", dataDir, r.name, err, r.name, dataDir)
	}
	return nil
}
