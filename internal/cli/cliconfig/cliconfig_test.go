package cliconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigFileIsStrictAndPrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "lethe", "config.yaml")
	if err := (&File{Contexts: map[string]Context{"a": {URL: "http://a", Token: "secret"}}}).Save(path); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config file mode %v (%v), want 0600: it holds tokens", st.Mode().Perm(), err)
	}
	if err := os.WriteFile(path, []byte("contexts:\n  a:\n    urll: http://a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "field urll not found") {
		t.Fatalf("a misspelt key: %v, want an error naming it", err)
	}
	if err := os.WriteFile(path, []byte("current-context: gone\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), `current-context "gone" is not among its contexts`) {
		t.Fatalf("a current context that does not exist: %v", err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := Load(path); err != nil || len(f.Contexts) != 0 {
		t.Fatalf("an empty file: %+v, %v", f, err)
	}
}

func TestPathRespectsXDG(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HOME": "/home/u"}
	get := func(k string) string { return env[k] }
	if p, err := Path(get); err != nil || p != "/home/u/.config/lethe/config.yaml" {
		t.Fatalf("Path with HOME: %q, %v", p, err)
	}
	env["XDG_CONFIG_HOME"] = "/xdg"
	if p, err := Path(get); err != nil || p != "/xdg/lethe/config.yaml" {
		t.Fatalf("Path with XDG_CONFIG_HOME: %q, %v", p, err)
	}
	env["XDG_CONFIG_HOME"] = "relative" // not absolute: ignored, as the XDG spec says
	if p, _ := Path(get); p != "/home/u/.config/lethe/config.yaml" {
		t.Fatalf("Path with a relative XDG_CONFIG_HOME: %q", p)
	}
	if _, err := Path(func(string) string { return "" }); err == nil {
		t.Fatal("Path without HOME or XDG_CONFIG_HOME succeeded")
	}
}
