package pgembed

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// writeHBA replaces pg_hba.conf before every start, so a cluster made by
// an older lethe (trust on TCP) is closed on its next start, and nothing
// edited by hand can quietly open it again.
//
// Local connections are trusted: the socket folder is mode 0700 and
// owned by the server's OS user, so only that user and root reach it.
// TCP, only when a listener is configured, needs the generated password.
func writeHBA(r *runner, l layout, tcp, replication bool) error {
	var b strings.Builder
	b.WriteString("# Written by lethe at every start of this cluster; edits are overwritten.\n")
	fmt.Fprintf(&b, "# Unix socket: its folder %s is mode 0700, so only the server's OS user\n# (and root) can reach it.\n", l.sockDir)
	b.WriteString("local all all trust\n")
	if replication {
		b.WriteString("# Standbys copy and follow this cluster over the same socket.\nlocal replication all trust\n")
	}
	if tcp {
		fmt.Fprintf(&b, "# TCP: SCRAM password only; the postgres role's password is in %s.\n", l.passwordFile())
		b.WriteString("host all all all scram-sha-256\n")
	} else {
		b.WriteString("# No TCP listener is configured; any TCP connection finds no entry and is refused.\n")
	}
	path := filepath.Join(l.dataDir(), "pg_hba.conf")
	tmp := path + ".lethe-new"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("pgembed: write pg_hba.conf: %w", err)
	}
	if err := r.chown(tmp); err != nil {
		return fmt.Errorf("pgembed: write pg_hba.conf: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("pgembed: write pg_hba.conf: %w", err)
	}
	return nil
}

// ensurePassword returns the postgres role's TCP password, generating it
// on first use. The file is lethe's (not the server's OS user's), mode
// 0600; a looser mode is tightened.
func ensurePassword(path string) (string, error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() != 0o600 {
			if err := os.Chmod(path, 0o600); err != nil {
				return "", fmt.Errorf("pgembed: password file: %w", err)
			}
		}
		if pw := strings.TrimSpace(string(b)); pw != "" {
			return pw, nil
		}
	case !errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("pgembed: password file: %w", err)
	}
	pw := rand.Text() // 26 base32 characters, 130 bits
	if err := os.WriteFile(path, []byte(pw+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("pgembed: password file: %w", err)
	}
	return pw, nil
}

// setPassword gives the postgres role password as a SCRAM verifier
// computed here, so the password itself never reaches the server (nor
// its log, should the statement be logged).
func setPassword(ctx context.Context, connString, password string) error {
	conn, err := pgconn.Connect(ctx, connString)
	if err != nil {
		return fmt.Errorf("pgembed: set password: %w", err)
	}
	defer conn.Close(ctx)
	// The verifier is base64 and digits: no quote can occur in it.
	sql := "ALTER ROLE postgres PASSWORD '" + scramVerifier(password, randomSalt(), 4096) + "'"
	if _, err := conn.Exec(ctx, sql).ReadAll(); err != nil {
		return fmt.Errorf("pgembed: set password: %w", err)
	}
	return nil
}

func randomSalt() []byte {
	salt := make([]byte, 16)
	rand.Read(salt)
	return salt
}

// scramVerifier is what PostgreSQL stores for a SCRAM-SHA-256 password
// (RFC 5802, RFC 7677; PostgreSQL's scram_build_secret).
func scramVerifier(password string, salt []byte, iterations int) string {
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		panic(err) // only for parameters FIPS mode forbids; ours are fixed
	}
	clientKey := hmacSHA256(salted, "Client Key")
	storedKey := sha256.Sum256(clientKey)
	serverKey := hmacSHA256(salted, "Server Key")
	enc := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, enc(salt), enc(storedKey[:]), enc(serverKey))
}

func hmacSHA256(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}
