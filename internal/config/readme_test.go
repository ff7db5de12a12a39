package config_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/internal/cli"
	"github.com/lethe-mq/lethe/internal/config"
)

// root is the repository's root, from this package's folder.
const root = "../.."

// tableRow renders one variable as the README's configuration table writes
// it.
func tableRow(v config.Variable) string {
	def := "(none)"
	if v.Default != "" {
		def = "`" + v.Default + "`"
	}
	rng := v.Range
	if rng == "" {
		rng = "text"
	}
	return "| `" + v.Name + "` | " + def + " | " + rng + " | " + v.Meaning + " |"
}

// settingsRows returns the rows of the settings tables in a markdown file
// (those under the header "| variable | default | range | meaning |").
func settingsRows(t *testing.T, path string) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	in := false
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case strings.HasPrefix(line, "| variable | default | range | meaning |"):
			in = true
		case in && strings.HasPrefix(line, "| `"):
			rows = append(rows, line)
		case in && !strings.HasPrefix(line, "|"):
			in = false
		}
	}
	return rows
}

// TestTheReadmeTableIsTheConfig checks README.md's configuration table,
// row by row, against config.Variables: every variable, its default, its
// range. A failure prints the table to paste.
func TestTheReadmeTableIsTheConfig(t *testing.T) {
	t.Parallel()
	got := settingsRows(t, "README.md")
	var want []string
	for _, v := range config.Variables() {
		want = append(want, tableRow(v))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("README.md's configuration table differs from internal/config; it should read:\n\n"+
			"| variable | default | range | meaning |\n|---|---|---|---|\n%s", strings.Join(want, "\n"))
	}
}

// TestTheRetentionGuideSettingsAreTheConfig checks the rows of
// docs/retention.md's settings table, a part of the README's.
func TestTheRetentionGuideSettingsAreTheConfig(t *testing.T) {
	t.Parallel()
	want := map[string]string{}
	for _, v := range config.Variables() {
		want[v.Name] = tableRow(v)
	}
	rows := settingsRows(t, "docs/retention.md")
	if len(rows) < 5 {
		t.Fatalf("found %d settings rows in docs/retention.md; the table moved or its header changed", len(rows))
	}
	for _, row := range rows {
		name := strings.Trim(strings.Fields(row)[1], "`")
		if row != want[name] {
			t.Errorf("docs/retention.md has\n%s\nwant\n%s", row, want[name])
		}
	}
}

// TestEveryVariableReadIsDocumented scans the server's code for
// environment variables read outside internal/config and checks each is a
// config.Variable (and so in the README), and that the defaults written
// where they are read are the documented ones.
func TestEveryVariableReadIsDocumented(t *testing.T) {
	t.Parallel()
	known := map[string]config.Variable{}
	for _, v := range config.Variables() {
		known[v.Name] = v
	}
	read := regexp.MustCompile(`(?:Getenv|LookupEnv|getenv)\("([A-Z][A-Z0-9_]*)"\)`)
	// The test harness's own switches are not lethe's configuration, nor
	// are the operating system's own variables.
	harness := []string{"internal/pgtest", "internal/testserver", "internal/faults"}
	for _, os := range []string{"HOME", "XDG_CONFIG_HOME"} {
		known[os] = config.Variable{Name: os}
	}
	found := 0
	for _, dir := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			for _, h := range harness {
				if strings.HasPrefix(filepath.ToSlash(rel), h+"/") {
					return nil
				}
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range read.FindAllStringSubmatch(string(src), -1) {
				found++
				if _, ok := known[m[1]]; !ok {
					t.Errorf("%s reads %s, which internal/config's Variables (and the README) do not list", rel, m[1])
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if found == 0 {
		t.Fatalf("found %d reads of the environment outside internal/config; the scan is broken", found)
	}
	if got := known["LETHE_URL"].Default; got != cli.DefaultServerURL {
		t.Fatalf("LETHE_URL is documented as %q, the client commands use %q", got, cli.DefaultServerURL)
	}
}

// TestServeRefusesABadSettingInOneLine runs `lethe serve` as main would,
// with a setting out of range: it stops before starting anything.
func TestServeRefusesABadSettingInOneLine(t *testing.T) {
	t.Setenv("METRICS_RETENTION_DAYS", "999999")
	var out, errOut strings.Builder
	root := cli.NewRoot(&out, &errOut)
	root.SetArgs([]string{"serve", "--data-dir", t.TempDir()})
	err := root.Execute()
	if err == nil || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "METRICS_RETENTION_DAYS=999999 is not accepted: want 1 to 36500 days; 0 or off: never") {
		t.Fatalf("lethe serve with METRICS_RETENTION_DAYS=999999: %v; want one line naming it and its range", err)
	}
}
