package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/internal/cli/cliconfig"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// writeConfig writes a config file under home/.config/lethe.
func writeConfig(t *testing.T, home string, f cliconfig.File) {
	t.Helper()
	if err := f.Save(filepath.Join(home, ".config", "lethe", "config.yaml")); err != nil {
		t.Fatal(err)
	}
}

func TestConfigPrecedence(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	writeConfig(t, home, cliconfig.File{CurrentContext: "cur", Contexts: map[string]cliconfig.Context{
		"cur":   {URL: "http://cur:1", Token: "cur-token", OperatorToken: "cur-op"},
		"other": {URL: "http://other:2", Token: "other-token"},
	}})
	cases := []struct {
		name                   string
		flags                  clientFlags
		env                    map[string]string
		server, token, opToken string
	}{
		{"the current context", clientFlags{}, nil, "http://cur:1", "cur-token", "cur-op"},
		{"environment over the current context", clientFlags{}, map[string]string{"LETHE_URL": "http://env:3", "LETHE_TOKEN": "env-token"},
			"http://env:3", "env-token", "cur-op"},
		{"LETHE_CONTEXT picks a context", clientFlags{}, map[string]string{"LETHE_CONTEXT": "other"}, "http://other:2", "other-token", ""},
		{"LETHE_URL over the LETHE_CONTEXT one", clientFlags{}, map[string]string{"LETHE_CONTEXT": "other", "LETHE_URL": "http://env:3"},
			"http://env:3", "other-token", ""},
		{"--context over the environment", clientFlags{context: "other"}, map[string]string{"LETHE_URL": "http://env:3", "LETHE_TOKEN": "env-token"},
			"http://other:2", "other-token", ""},
		{"flags over everything", clientFlags{server: "http://flag:4", token: "flag-token", operatorToken: "flag-op", context: "other"},
			map[string]string{"LETHE_URL": "http://env:3", "LETHE_TOKEN": "env-token"}, "http://flag:4", "flag-token", "flag-op"},
	}
	for _, c := range cases {
		env := map[string]string{"HOME": home}
		for k, v := range c.env {
			env[k] = v
		}
		f := c.flags
		if err := f.resolve(func(k string) string { return env[k] }); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if f.server != c.server || f.token != c.token || f.operatorToken != c.opToken {
			t.Errorf("%s: server %q token %q operator %q, want %q %q %q", c.name, f.server, f.token, f.operatorToken, c.server, c.token, c.opToken)
		}
	}

	// No file at all: the default.
	f := clientFlags{}
	if err := f.resolve(func(k string) string { return map[string]string{"HOME": t.TempDir()}[k] }); err != nil || f.server != DefaultServerURL {
		t.Fatalf("without a config file: %q, %v", f.server, err)
	}
	// XDG_CONFIG_HOME wins over HOME.
	xdg := t.TempDir()
	if err := (&cliconfig.File{CurrentContext: "x", Contexts: map[string]cliconfig.Context{"x": {URL: "http://xdg:5"}}}).
		Save(filepath.Join(xdg, "lethe", "config.yaml")); err != nil {
		t.Fatal(err)
	}
	f = clientFlags{}
	if err := f.resolve(func(k string) string { return map[string]string{"HOME": home, "XDG_CONFIG_HOME": xdg}[k] }); err != nil || f.server != "http://xdg:5" {
		t.Fatalf("with XDG_CONFIG_HOME: %q, %v", f.server, err)
	}
	// A context that is not there is an error, not the default.
	f = clientFlags{context: "missing"}
	if err := f.resolve(func(k string) string { return map[string]string{"HOME": home}[k] }); err == nil ||
		!strings.Contains(err.Error(), `context "missing" is not in `+filepath.Join(home, ".config", "lethe", "config.yaml")) {
		t.Fatalf("unknown --context: %v", err)
	}
}

// TestContextCommands uses the process environment (HOME), so it does not
// run in parallel.
func TestContextCommands(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	srv := testserver.Start(t, testserver.Options{Config: func(c *config.Server) {
		c.AuthToken, c.OperatorToken = "user-token", "op-token"
	}})

	wantContains(t, mustLethe(t, "", "context", "list"), "no contexts in "+filepath.Join(home, ".config", "lethe", "config.yaml"))
	if _, err := lethe(t, "", "context", "set", "test"); err == nil || !strings.Contains(err.Error(), "give its --server") {
		t.Fatalf("set of a new context without --server: %v", err)
	}
	out := mustLethe(t, "", "context", "set", "test", "--server", srv.URL, "--token", "user-token")
	wantContains(t, out, "added context test ("+srv.URL+")", "it is the current context")
	mustLethe(t, "", "context", "set", "nowhere", "--server", "http://127.0.0.1:1")

	// The current context reaches the server with its token.
	mustLethe(t, "", "queue", "configure", "ctxq")
	_, err := lethe(t, "", "queue", "delete", "ctxq", "--yes")
	if err == nil || !strings.Contains(err.Error(), "operator token") {
		t.Fatalf("delete without an operator token: %v", err)
	}
	mustLethe(t, "", "context", "set", "test", "--operator-token", "op-token")
	wantContains(t, mustLethe(t, "", "queue", "delete", "ctxq", "--yes"), "deleted queue ctxq")

	out = mustLethe(t, "", "context", "list")
	wantContains(t, out, "CURRENT  NAME", "*        test     "+srv.URL, "set")
	views := decode[[]contextView](t, mustLethe(t, "", "context", "list", "--json"))
	if len(views) != 2 || views[1].Name != "test" || !views[1].Current || !views[1].OperatorToken || strings.Contains(out, "op-token") {
		t.Fatalf("context list = %+v; want test current with an operator token, never printed", views)
	}
	// Contexts complete by name.
	wantContains(t, mustLethe(t, "", "__complete", "context", "use", "no"), "nowhere\n:4")

	wantContains(t, mustLethe(t, "", "context", "use", "nowhere"), "now using context nowhere")
	if _, err := lethe(t, "", "queue", "list"); err == nil || !strings.Contains(err.Error(), "cannot reach lethe at http://127.0.0.1:1") {
		t.Fatalf("with the unreachable context current: %v", err)
	}
	mustLethe(t, "", "queue", "list", "--context", "test")
	t.Setenv("LETHE_CONTEXT", "test")
	mustLethe(t, "", "queue", "list")
	t.Setenv("LETHE_CONTEXT", "")

	wantContains(t, mustLethe(t, "", "context", "delete", "nowhere"), "no context is current now")
	if _, err := lethe(t, "", "context", "use", "nowhere"); err == nil || !strings.Contains(err.Error(), `no context "nowhere"`) {
		t.Fatalf("use of a deleted context: %v", err)
	}
	if _, err := lethe(t, "", "context", "set", "bad name", "--server", srv.URL); err == nil {
		t.Fatal("a context name with a space was accepted")
	}
	if _, err := lethe(t, "", "context", "set", "x", "--server", "localhost:6632"); err == nil || !strings.Contains(err.Error(), "want http://host:port") {
		t.Fatalf("a server without a scheme: %v", err)
	}
}
