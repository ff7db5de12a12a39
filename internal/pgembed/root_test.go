package pgembed

import (
	"context"
	"os"
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

// As root, a data folder the postgres user cannot reach is refused with
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
// folder, say) is lethe's to manage: the postgres group may enter it.
func TestRootOpensEmptyDataDirToPostgresGroup(t *testing.T) {
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
		t.Fatalf("data folder: uid %d gid %d mode %04o; want root, the postgres group, 0710", st.Uid, st.Gid, fi.Mode().Perm())
	}
}

// As root, the data folder stays root's (the postgres group may only
// enter it); the cluster's own files go to postgres, the lock and the
// password file stay root's.
func TestRootKeepsDataDirAndHandsOverCluster(t *testing.T) {
	requireRoot(t)
	t.Parallel()
	dataDir := filepath.Join(reachableDir(t), "c")
	c := startCluster(t, Config{DataDir: dataDir, ListenAddress: "127.0.0.1"})
	pg, err := user.Lookup("postgres")
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
