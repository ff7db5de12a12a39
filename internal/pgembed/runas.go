package pgembed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runner runs PostgreSQL programs as the OS user that owns the cluster:
// the invoking user normally, or "postgres" when we are root, because
// initdb and postgres refuse to run as root.
type runner struct {
	cred *syscall.Credential // nil: run as ourselves
	uid  int                 // owner to give folders we create; -1: leave as is
	gid  int
	env  []string
}

func newRunner() (*runner, error) {
	r := &runner{uid: -1, gid: -1, env: cleanEnv()}
	if os.Geteuid() != 0 {
		return r, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgembed: running as root, so the server must run as the \"postgres\" OS user, "+
			"but looking it up failed (%v); install the postgresql package (it creates the user) or run as a non-root user", err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pgembed: postgres user has non-numeric uid/gid %q/%q", u.Uid, u.Gid)
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
	r.uid, r.gid = uid, gid
	r.env = append(r.env, "HOME="+u.HomeDir, "USER=postgres", "LOGNAME=postgres")
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

// chown hands a folder we created to the cluster owner.
func (r *runner) chown(path string) error {
	if r.uid < 0 {
		return nil
	}
	return os.Chown(path, r.uid, r.gid)
}

// owns reports whether path already belongs to the cluster owner.
func (r *runner) owns(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	uid := r.uid
	if uid < 0 {
		uid = os.Geteuid()
	}
	return ok && int(st.Uid) == uid
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
