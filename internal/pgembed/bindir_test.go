package pgembed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindBinDir(t *testing.T) {
	dir, err := FindBinDir()
	if err != nil {
		t.Fatalf("FindBinDir: %v", err)
	}
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s missing from %s: %v", name, dir, err)
		}
	}
}

func TestNewestVersionedPrefersHighestMajor(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"9.6", "15", "10", "16"} {
		bin := filepath.Join(root, v, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		names := []string{"initdb", "pg_ctl", "postgres"}
		if v == "16" {
			names = names[:2] // incomplete install: must be skipped
		}
		for _, name := range names {
			if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, ok := newestVersioned([]string{filepath.Join(root, "*", "bin")})
	if want := filepath.Join(root, "15", "bin"); !ok || got != want {
		t.Fatalf("newestVersioned = %q, %v; want %q", got, ok, want)
	}
	if _, ok := newestVersioned([]string{filepath.Join(root, "none-*", "bin")}); ok {
		t.Fatal("newestVersioned found something in an empty pattern")
	}
}

func TestErrNoBinariesTellsWhatToDo(t *testing.T) {
	msg := ErrNoBinaries.Error()
	for _, want := range []string{"apt-get install postgresql", EnvBinDir, "DATABASE_URL"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
}

// Data made by another major version gets advice a user can follow: an
// environment variable for the binaries, never "delete the folder".
func TestVersionMismatchGivesAdvice(t *testing.T) {
	binDir, err := FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	run, err := newRunner("", testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	l := layout{root: t.TempDir()}
	if err := os.MkdirAll(l.dataDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.dataDir(), "PG_VERSION"), []byte("9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = pickBinDir(context.Background(), run, binDir, false, l)
	if err == nil {
		t.Fatal("binaries of another major version accepted")
	}
	msg := err.Error()
	for _, want := range []string{EnvBinDir, "PostgreSQL 9", "/usr/lib/postgresql/9/bin", "pg_upgrade"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	if strings.Contains(strings.ToLower(msg), "delete") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line that does not advise deleting data", msg)
	}
}
