package pgembed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runner runs PostgreSQL programs as the OS user that owns the cluster:
// the invoking user normally, or, when we are root (initdb and postgres
// refuse to run as root), a system user of lethe's own (Config.OSUser,
// lethe-pg by default), never the machine's shared postgres user.
type runner struct {
	cred *syscall.Credential // nil: run as ourselves
	uid  int                 // owner to give folders we create; -1: leave as is
	gid  int
	name string // the server's OS user, for messages
	env  []string
}

// newRunner runs programs as ourselves, or as root as the OS user osUser
// (DefaultOSUser when empty), which it creates when the machine lacks it.
func newRunner(osUser string, log *slog.Logger) (*runner, error) {
	r := &runner{uid: -1, gid: -1, env: cleanEnv(), name: currentUserName()}
	if os.Geteuid() != 0 {
		return r, nil
	}
	name := cmp.Or(osUser, DefaultOSUser)
	u, err := serverUser(name, log)
	if err != nil {
		return nil, err
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pgembed: OS user %s has non-numeric uid/gid %q/%q", name, u.Uid, u.Gid)
	}
	if uid == 0 {
		return nil, fmt.Errorf("pgembed: OS user %s (%s) is root, which PostgreSQL refuses to run as; "+
			"leave %s unset for a user of lethe's own (%s)", name, EnvOSUser, EnvOSUser, DefaultOSUser)
	}
	var groups []uint32
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.Atoi(id); err == nil {
				groups = append(groups, uint32(g))
			}
		}
	}
	r.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: groups}
	r.uid, r.gid, r.name = uid, gid, name
	r.env = append(r.env, "HOME="+u.HomeDir, "USER="+name, "LOGNAME="+name)
	return r, nil
}

// cleanEnv drops PG* variables (PGDATA, PGPORT, PGOPTIONS, ...) so the
// caller's environment cannot point our tools at some other server, and
// the identity variables that newRunner may replace.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PG") || k == "HOME" || k == "USER" || k == "LOGNAME" {
			continue
		}
		env = append(env, kv)
	}
	if os.Geteuid() != 0 {
		if h, err := os.UserHomeDir(); err == nil {
			env = append(env, "HOME="+h)
		}
	}
	return env
}

// command builds a command run as the cluster owner in dir, which must be
// a folder that user can enter (initdb complains otherwise).
func (r *runner) command(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = r.env
	if r.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	}
	// Bound the wait for output pipes in case a grandchild keeps them open.
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// chown hands a file or folder we made to the cluster owner.
func (r *runner) chown(path string) error {
	if r.uid < 0 {
		return nil
	}
	return os.Lchown(path, r.uid, r.gid)
}

// ownerUID is the uid the server runs as.
func (r *runner) ownerUID() int {
	if r.uid < 0 {
		return os.Geteuid()
	}
	return r.uid
}

// privateDir makes dir a folder only the server's OS user (and root) can
// enter. Local connections need no password, so this folder's mode is
// what keeps other local users away from the socket.
func (r *runner) privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder (a symbolic link?); remove it", dir)
	}
	if err := r.chown(dir); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("%s: %w (it must belong to OS user %s)", dir, err, r.name)
	}
	return nil
}

// ownedFile creates path (mode 0600) for the cluster owner if it is
// missing, and hands it over if it is not theirs (only root can).
func (r *runner) ownedFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	if uid, ok := fileOwner(path); ok && uid != r.ownerUID() {
		return r.chown(path)
	}
	return nil
}

// checkOwner refuses a cluster folder that belongs to another OS user:
// PostgreSQL would refuse it anyway, with a less helpful message, and
// handing a whole cluster to another user is the operator's decision.
func (r *runner) checkOwner(dataDir string) error {
	uid, ok := fileOwner(dataDir)
	if !ok || uid == r.ownerUID() {
		return nil
	}
	owner := strconv.Itoa(uid)
	if u, err := user.LookupId(owner); err == nil {
		owner = u.Username
	}
	hint := ""
	if r.cred != nil {
		hint = " (as root lethe runs the server as " + r.name + ", " + EnvOSUser + ")"
	}
	return fmt.Errorf("pgembed: %s belongs to OS user %s but the server runs as %s%s; run lethe as %s, or `chown -R %s %s`",
		dataDir, owner, r.name, hint, owner, r.name, dataDir)
}

// fileOwner returns path's owner uid; ok is false when path is missing.
func fileOwner(path string) (int, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// describeOwner says who owns path and its mode, for messages.
func describeOwner(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return err.Error()
	}
	owner := "?"
	if uid, ok := fileOwner(path); ok {
		owner = strconv.Itoa(uid)
		if u, err := user.LookupId(owner); err == nil {
			owner = u.Username
		}
	}
	return fmt.Sprintf("owner %s, mode %04o", owner, fi.Mode().Perm())
}

func currentUserName() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "uid " + strconv.Itoa(os.Geteuid())
}

// can asks the kernel, as the cluster owner, whether `test <flag> path`
// holds. Asking beats reading mode bits: it honours ACLs and every
// parent folder on the way.
func (r *runner) can(ctx context.Context, flag, path string) bool {
	if r.cred == nil {
		return true // we are the owner; our own errors will speak for themselves
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return r.command(ctx, "/", "test", flag, path).Run() == nil
}
