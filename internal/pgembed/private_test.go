package pgembed

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// By default nobody but the server's OS user (and root) can connect: the
// socket folder is 0700 and there is no TCP listener at all. As root, the
// test also tries as another OS user.
func TestPrivateByDefault(t *testing.T) {
	t.Parallel()
	c := startCluster(t, Config{DataDir: filepath.Join(reachableDir(t), "c")})

	fi, err := os.Lstat(c.SocketDir())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 || !fi.IsDir() {
		t.Errorf("socket folder %s has mode %v, want a folder of mode 0700", c.SocketDir(), fi.Mode())
	}
	if uid, _ := fileOwner(c.SocketDir()); uid != c.run.ownerUID() {
		t.Errorf("socket folder owned by uid %d, want the server's uid %d", uid, c.run.ownerUID())
	}
	conn := connect(t, c.ConnString("postgres"))
	if got := queryString(t, conn, "SHOW listen_addresses"); got != "" {
		t.Errorf("listen_addresses = %q, want empty (no TCP)", got)
	}
	if ports := tcpListenPorts(t, postmasterPID(t, c)); len(ports) > 0 {
		t.Errorf("postmaster listens on TCP ports %v, want none", ports)
	}
	hba, err := os.ReadFile(filepath.Join(c.layout.dataDir(), "pg_hba.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(hba), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "host") {
			t.Errorf("pg_hba.conf has a TCP rule without a TCP listener: %q", line)
		}
	}
	if os.Geteuid() == 0 {
		otherUserCannotConnect(t, c)
	} else {
		t.Log("not root: cannot act as another OS user; checked the socket folder's mode and owner only")
	}
}

// otherUserCannotConnect runs psql as another local OS user, which must
// fail on permissions; the same command as root connects, so the check
// is real.
func otherUserCannotConnect(t *testing.T, c *Cluster) {
	t.Helper()
	psql := filepath.Join(c.binDir, "psql")
	conn := c.ConnString("postgres")
	if out, err := exec.Command(psql, conn, "-Atc", "SELECT 'owner ok'").CombinedOutput(); err != nil ||
		strings.TrimSpace(string(out)) != "owner ok" {
		t.Fatalf("psql as root: %v: %s", err, out)
	}
	other := otherOSUser(t)
	cmd := exec.Command(psql, conn, "-Atc", "SELECT 'other user got in'")
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: other}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("psql as uid %d connected: %s", other.Uid, out)
	}
	if !strings.Contains(string(out), "Permission denied") {
		t.Fatalf("psql as uid %d failed, but not on permissions: %s", other.Uid, out)
	}
}

// otherOSUser is an unprivileged account to act as: nobody, or one the
// test creates.
func otherOSUser(t *testing.T) *syscall.Credential {
	t.Helper()
	u, err := user.Lookup("nobody")
	if err != nil {
		name := "lethe-test-other"
		if u, err = user.Lookup(name); err != nil {
			if out, err := exec.Command("useradd", "--system", "--no-create-home", name).CombinedOutput(); err != nil {
				t.Fatalf("create OS user %s: %v: %s", name, err, out)
			}
			if u, err = user.Lookup(name); err != nil {
				t.Fatal(err)
			}
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// With a TCP listener asked for, TCP needs the generated password, kept
// 0600 in the data folder and the same across restarts.
func TestTCPListenerNeedsPassword(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(reachableDir(t), "c")
	c := startCluster(t, Config{DataDir: dataDir, ListenAddress: "127.0.0.1"})
	pwFile := filepath.Join(dataDir, "postgres.password")
	fi, err := os.Stat(pwFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("password file %s: mode %v, err %v; want mode 0600", pwFile, fi.Mode(), err)
	}
	if ports := tcpListenPorts(t, postmasterPID(t, c)); len(ports) == 0 || ports[0] != c.Port() {
		t.Fatalf("postmaster listens on TCP %v, want [%d]", ports, c.Port())
	}

	tcp := connect(t, c.URL("postgres"))
	if got := queryString(t, tcp, "SELECT inet_server_addr()::text"); !strings.HasPrefix(got, "127.0.0.1") {
		t.Errorf("URL connected to %q, want 127.0.0.1", got)
	}
	base := "host=127.0.0.1 port=" + strconv.Itoa(c.Port()) + " user=postgres dbname=postgres sslmode=disable"
	for _, pw := range []string{"", "wrong"} {
		_, err := connect1(base + " password='" + pw + "'")
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "28P01" {
			t.Errorf("password %q over TCP: err %v, want invalid password (28P01)", pw, err)
		}
	}

	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	c2 := startCluster(t, Config{DataDir: dataDir, ListenAddress: "127.0.0.1"})
	if c2.password != c.password {
		t.Error("password changed across restarts")
	}
	connect(t, c2.URL("postgres"))
}

// A cluster made by an older lethe (trust for every connection, listening
// on 127.0.0.1, even by ALTER SYSTEM) is closed on its next start.
func TestOldTrustClusterIsClosedOnStart(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(reachableDir(t), "c")
	c := startCluster(t, Config{DataDir: dataDir})
	conn := connect(t, c.ConnString("postgres"))
	if _, err := conn.Exec(context.Background(), "ALTER SYSTEM SET listen_addresses = '127.0.0.1'"); err != nil {
		t.Fatal(err)
	}
	conn.Close(context.Background())
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	hbaPath := filepath.Join(dataDir, "data", "pg_hba.conf")
	old := "local all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n"
	if err := os.WriteFile(hbaPath, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}

	c = startCluster(t, Config{DataDir: dataDir})
	hba, err := os.ReadFile(hbaPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(hba), "host all all 127.0.0.1/32 trust") {
		t.Fatalf("pg_hba.conf still trusts TCP:\n%s", hba)
	}
	conn = connect(t, c.ConnString("postgres"))
	if got := queryString(t, conn, "SHOW listen_addresses"); got != "" {
		t.Errorf("listen_addresses = %q, want empty", got)
	}
	if ports := tcpListenPorts(t, postmasterPID(t, c)); len(ports) > 0 {
		t.Errorf("postmaster listens on TCP ports %v, want none", ports)
	}
}

// A TCP port already in use is reported in one line before initdb runs.
func TestBusyPortFailsBeforeInitdb(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	dataDir := filepath.Join(reachableDir(t), "c")
	began := time.Now()
	_, err = Start(context.Background(), Config{DataDir: dataDir, ListenAddress: "127.0.0.1", Port: port, Logger: testLogger(t)})
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(port)) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Start on a busy port: %v; want one line naming port %d", err, port)
	}
	if _, statErr := os.Stat(filepath.Join(dataDir, "data")); !os.IsNotExist(statErr) {
		t.Errorf("initdb ran before the port was checked (data folder exists: %v)", statErr)
	}
	t.Logf("refused in %v: %v", time.Since(began), err)
}

// tcpListenPorts lists the TCP ports pid listens on, from /proc: the
// sockets among its descriptors that /proc/net/tcp{,6} shows listening.
func tcpListenPorts(t *testing.T, pid int) []int {
	t.Helper()
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Skipf("no /proc to inspect sockets: %v", err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd.Name())
		if inode, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var ports []int
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] {
				continue
			}
			_, portHex, _ := strings.Cut(fields[1], ":")
			if p, err := strconv.ParseInt(portHex, 16, 32); err == nil {
				ports = append(ports, int(p))
			}
		}
		f.Close()
	}
	return ports
}
