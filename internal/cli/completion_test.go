package cli

import (
	"net"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/internal/testserver"
	"github.com/lethe-mq/lethe/internal/version"
)

func TestQueueNamesComplete(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	s := "--server=" + srv.URL
	for _, q := range []string{"orders", "ops", "billing"} {
		mustLethe(t, "", "queue", "configure", q, s)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"tail", s, ""}, "billing\nops\norders\n:4\n"},
		{[]string{"queue", "show", s, "o"}, "ops\norders\n:4\n"},
		{[]string{"lag", s, "b"}, "billing\n:4\n"},
		{[]string{"push", s, "orders", ""}, ":4\n"}, // one queue only
		{[]string{"dlq", "list", s, "--queue", "or"}, "orders\n:4\n"},
	}
	for _, c := range cases {
		out := mustLethe(t, "", append([]string{"__complete"}, c.args...)...)
		if got := out[:strings.LastIndex(out, ":4\n")+3]; got != c.want {
			t.Errorf("completing %q: %q, want %q", c.args, got, c.want)
		}
	}
}

func TestCompletionGivesUpQuietlyWithoutAServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + ln.Addr().String()
	ln.Close()
	out, errOut, err := letheErr(t, "", "__complete", "tail", "--server", addr, "")
	if err != nil || !strings.HasPrefix(out, ":4\n") {
		t.Fatalf("completion without a server: %q, %v; want no names and no error", out, err)
	}
	if strings.Contains(errOut, "cannot reach") {
		t.Fatalf("completion without a server complained: %q", errOut)
	}
}

func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	for shell, want := range map[string]string{
		"bash":       "__start_lethe",
		"zsh":        "#compdef lethe",
		"fish":       "complete -c lethe",
		"powershell": "Register-ArgumentCompleter",
	} {
		if out := mustLethe(t, "", "completion", shell); !strings.Contains(out, want) {
			t.Errorf("completion %s lacks %q", shell, want)
		}
	}
	if _, err := lethe(t, "", "completion", "tcsh"); err == nil || !strings.Contains(err.Error(), "choose bash, zsh, fish or powershell") {
		t.Fatalf("completion tcsh: %v", err)
	}
}

func TestEveryCommandHasAnExample(t *testing.T) {
	t.Parallel()
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.Hidden && c.Name() != "help" && strings.TrimSpace(c.Example) == "" {
			t.Errorf("`%s --help` shows no example", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRoot(nil, nil))
}

// An unstamped build (as tests are) reports the changelog's newest
// release; the tests run with -buildvcs=false or without a revision.
func TestVersion(t *testing.T) {
	t.Parallel()
	info := version.Get()
	if out, want := mustLethe(t, "", "version"), "lethe "+info.Long()+"\n"; out != want ||
		!strings.HasPrefix(out, "lethe "+version.Release+" (") || !strings.Contains(out, runtime.Version()+")") {
		t.Fatalf("lethe version printed %q, want %q", out, want)
	}
	if out, want := mustLethe(t, "", "--version"), "lethe "+info.String()+"\n"; out != want || !strings.HasPrefix(out, "lethe "+version.Release) {
		t.Fatalf("lethe --version printed %q, want %q", out, want)
	}
	if v := decode[map[string]any](t, mustLethe(t, "", "version", "--json")); v["version"] != version.Release || v["goVersion"] != runtime.Version() {
		t.Fatalf("lethe version --json = %v", v)
	}
}
