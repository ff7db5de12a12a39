package pgembed

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("only root hands the server to another OS user")
	}
}

// As root, a data folder the server's OS user cannot reach is refused with
// what to do; the cluster is not moved elsewhere and no permission of the
// user's folders changes.
func TestRootUnreachableDataDirIsRefused(t *testing.T) {
	requireRoot(t)
	t.Parallel()
	private := filepath.Join(reachableDir(t), "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	// Not lethe's: a file of the user's is in it.
	if err := os.WriteFile(filepath.Join(private, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, dataDir := range map[string]string{
		"under a private folder": filepath.Join(private, "cluster"),
		"a private folder":       private,
	} {
		_, err := Start(context.Background(), Config{DataDir: dataDir, Logger: testLogger(t)})
		if err == nil {
			t.Fatalf("%s: Start succeeded", name)
		}
		msg := err.Error()
		if !strings.Contains(msg, private) || !strings.Contains(msg, "chmod o+x") || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q; want one line naming %s and what to do", name, msg, private)
		}
	}
	if fi, err := os.Stat(private); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("permissions of %s changed: %v %v", private, fi.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(private, "cluster")); !os.IsNotExist(err) {
		t.Errorf("refused start created %s (err %v)", filepath.Join(private, "cluster"), err)
	}
}

// As root, an empty folder of root's given as the data folder (a temp
// folder, say) is lethe's to manage: the server user's group may enter it.
func TestRootOpensEmptyDataDirToTheServersGroup(t *testing.T) {
	requireRoot(t)
	t.Parallel()
	dataDir := filepath.Join(reachableDir(t), "empty")
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	c := startCluster(t, Config{DataDir: dataDir})
	fi, err := os.Stat(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 0 || int(st.Gid) != c.run.gid || fi.Mode().Perm() != 0o710 {
		t.Fatalf("data folder: uid %d gid %d mode %04o; want root, the server user's group, 0710", st.Uid, st.Gid, fi.Mode().Perm())
	}
}

// As root, the data folder stays root's (the server user's group may
// only enter it); the cluster's own files go to the server's OS user
// (lethe-pg), the lock and the password file stay root's.
func TestRootKeepsDataDirAndHandsOverCluster(t *testing.T) {
	requireRoot(t)
	t.Parallel()
	dataDir := filepath.Join(reachableDir(t), "c")
	c := startCluster(t, Config{DataDir: dataDir, ListenAddress: "127.0.0.1"})
	pg, err := user.Lookup(DefaultOSUser)
	if err != nil {
		t.Fatal(err)
	}
	pgUID, _ := strconv.Atoi(pg.Uid)
	pgGID, _ := strconv.Atoi(pg.Gid)
	for path, want := range map[string]struct {
		uid, gid int
		mode     os.FileMode
	}{
		dataDir:                                     {0, pgGID, 0o710},
		filepath.Join(dataDir, "data"):              {pgUID, -1, 0o700},
		filepath.Join(dataDir, "socket"):            {pgUID, -1, 0o700},
		filepath.Join(dataDir, "pg.log"):            {pgUID, -1, 0o600},
		filepath.Join(dataDir, lockFileName):        {0, -1, 0o600},
		filepath.Join(dataDir, "postgres.password"): {0, -1, 0o600},
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		st := fi.Sys().(*syscall.Stat_t)
		if int(st.Uid) != want.uid || (want.gid >= 0 && int(st.Gid) != want.gid) || fi.Mode().Perm() != want.mode {
			t.Errorf("%s: uid %d gid %d mode %04o; want uid %d gid %d mode %04o",
				path, st.Uid, st.Gid, fi.Mode().Perm(), want.uid, want.gid, want.mode)
		}
	}
	if c.Dir() != dataDir {
		t.Errorf("Dir() = %s, want %s", c.Dir(), dataDir)
	}
}

// procUIDs reads the real, effective, saved and filesystem uids of pid.
func procUIDs(t *testing.T, pid int) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatalf("status of the postmaster (pid %d): %v", pid, err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			return strings.Fields(rest)
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return nil
}

// ownedPrivate fails t unless path is a folder of uid with mode 0700.
func ownedPrivate(t *testing.T, path string, uid int) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || int(st.Uid) != uid || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: uid %d mode %04o; want a folder of uid %d, mode 0700", path, st.Uid, fi.Mode().Perm(), uid)
	}
}

// As root the server runs as lethe's own OS user (lethe-pg), never as the
// machine's postgres user, whose other processes (another PostgreSQL)
// could otherwise reach the socket folder: the postmaster's uids are its,
// and the data and socket folders are its, mode 0700.
func TestRootRunsTheServerAsItsOwnUser(t *testing.T) {
	requireRoot(t)
	t.Parallel()
	c := startCluster(t, Config{DataDir: filepath.Join(reachableDir(t), "c")})
	u, err := user.Lookup(DefaultOSUser)
	if err != nil {
		t.Fatalf("the server's OS user: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	if c.OSUser() != DefaultOSUser {
		t.Errorf("OSUser() = %q, want %q", c.OSUser(), DefaultOSUser)
	}
	pid := readPostmasterPID(filepath.Join(c.Dir(), "data"))
	if pid == 0 {
		t.Fatal("no postmaster.pid")
	}
	for i, id := range procUIDs(t, pid) {
		if id != u.Uid {
			t.Errorf("postmaster %d: uid %d of 4 is %s, want %s (%s)", pid, i+1, id, u.Uid, DefaultOSUser)
		}
	}
	if pg, err := user.Lookup("postgres"); err == nil && pg.Uid == u.Uid {
		t.Fatalf("%s has the postgres user's uid %s", DefaultOSUser, pg.Uid)
	}
	ownedPrivate(t, filepath.Join(c.Dir(), "data"), uid)
	ownedPrivate(t, c.SocketDir(), uid)
}

// LETHE_PG_OS_USER=postgres is refused before anything is made, saying
// why; so is a name useradd could read as an option.
func TestRootRefusesThePostgresUser(t *testing.T) {
	requireRoot(t)
	t.Parallel()
	for user, says := range map[string]string{"postgres": "machine's own PostgreSQL", "--help": "not an OS user name"} {
		dataDir := filepath.Join(reachableDir(t), "c")
		_, err := Start(context.Background(), Config{DataDir: dataDir, OSUser: user, Logger: testLogger(t)})
		if err == nil || !strings.Contains(err.Error(), EnvOSUser) || !strings.Contains(err.Error(), says) {
			t.Errorf("OSUser %q: %v; want a refusal naming %s and saying %q", user, err, EnvOSUser, says)
		}
		if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
			t.Errorf("OSUser %q: the refused start made %s (%v)", user, dataDir, err)
		}
	}
}

// A missing user is created as a system user (no login shell), and losing
// the race to create it to another process (useradd answering that the
// user exists) is success: the user is looked up again.
func TestRootCreatesTheUserAndSurvivesARace(t *testing.T) {
	requireRoot(t)
	name := "lethe-pg-test-" + strconv.Itoa(os.Getpid()%100000)
	t.Cleanup(func() { _ = exec.Command(findTool("userdel"), name).Run() })
	if _, err := user.Lookup(name); err == nil {
		t.Fatalf("user %s exists before the test", name)
	}
	calls := 0
	userMu.Lock()
	defer func() { userMu.Lock(); addUserOf = addUser; userMu.Unlock() }()
	addUserOf = func(n string) ([]string, error) {
		calls++
		args, err := addUser(n) // the other process wins...
		if err != nil {
			return args, err
		}
		return args, errors.New("useradd: user '" + n + "' already exists") // ...and we lose
	}
	userMu.Unlock()
	u, err := serverUser(name, testLogger(t))
	if err != nil || u.Username != name || calls != 1 {
		t.Fatalf("serverUser(%s) = %+v, %v after %d creations; want the user, made once", name, u, err, calls)
	}
	out, err := exec.Command("getent", "passwd", name).Output()
	if err != nil || !strings.Contains(string(out), "nologin") && !strings.Contains(string(out), "/bin/false") {
		t.Errorf("getent passwd %s: %q, %v; want a user without a login shell", name, out, err)
	}
}

// A cluster an older lethe ran as the machine's postgres user is handed
// to the server's own user (chown -R, said in the log) and starts.
func TestRootAdoptsAClusterOfThePostgresUser(t *testing.T) {
	requireRoot(t)
	t.Parallel()
	pg, err := user.Lookup("postgres")
	if err != nil {
		t.Skip("no postgres OS user on this machine: no older cluster can belong to it")
	}
	dataDir := filepath.Join(reachableDir(t), "c")
	seedCluster(t, dataDir)
	if out, err := exec.Command("chown", "-R", pg.Uid+":"+pg.Gid, filepath.Join(dataDir, "data")).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v %s", err, out)
	}
	pgGID, _ := strconv.Atoi(pg.Gid)
	if err := os.Chown(dataDir, 0, pgGID); err != nil { // as an older lethe left it
		t.Fatal(err)
	}
	var logged strings.Builder
	log := slog.New(slog.NewTextHandler(&logged, nil))
	c := startDurableCluster(t, Config{DataDir: dataDir, Logger: log, Throwaway: true})
	if !strings.Contains(logged.String(), "older lethe") || !strings.Contains(logged.String(), "chown -R "+DefaultOSUser) {
		t.Errorf("the log does not say the cluster was handed over:\n%s", logged.String())
	}
	u, err := user.Lookup(DefaultOSUser)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	ownedPrivate(t, filepath.Join(c.Dir(), "data"), uid)
	err = filepath.WalkDir(filepath.Join(c.Dir(), "data"), func(path string, _ fs.DirEntry, err error) error {
		if owner, ok := fileOwner(path); err == nil && ok && owner != uid {
			t.Errorf("%s still belongs to uid %d", path, owner)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, c.ConnString("postgres"))
	if got := queryString(t, conn, "SELECT current_user"); got != "postgres" {
		t.Errorf("current_user %q, want postgres (the database role)", got)
	}
}
