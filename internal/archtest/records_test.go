package archtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Code, comments, docs and test names speak of behaviours: a reader has no
// access to the tracker, the seed texts or the calendar they were written
// against, so an issue's or a seed's number, a working session's ordinal or
// a dated note tells them nothing. recordWords are the forms such a
// reference takes.
var recordWords = []struct {
	what string
	re   *regexp.Regexp
}{
	{"an issue number", regexp.MustCompile(`(?i)\bissues?\s*#?\d+`)},
	{"a seed number", regexp.MustCompile(`(?i)\bseeds?\s*0\d\d\b`)},
	{"a seed number", regexp.MustCompile(`(?i)\bseeds?\s+\d\b`)},
	{"a working session", regexp.MustCompile(`(?i)\b(this|that|last|next|earlier|previous|later|fourth|fifth|sixth|seventh|first|second|third) session\b`)},
	{"a time of day", regexp.MustCompile(`(?i)\b(this|yesterday|tomorrow) (morning|afternoon|evening)\b`)},
}

// mdDate is a calendar date in a document's prose (outside code, where
// dates are examples of input); it dates a note.
var mdDate = regexp.MustCompile(`\b20\d\d-[01]\d-[0-3]\d\b`)

// changelogVersion is the one place a date belongs: a released version's
// heading in CHANGELOG.md (Keep a Changelog dates them).
var changelogVersion = regexp.MustCompile(`^## \[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}$`)

// recordExts are the files the rule covers: code, SQL, scripts, docs,
// configuration and the dashboard's assets.
var recordExts = map[string]bool{
	".go": true, ".md": true, ".sql": true, ".yml": true, ".yaml": true,
	".sh": true, ".js": true, ".html": true, ".css": true,
}

// recordSkip are folders left out: bench/out holds generated results
// (their text comes from the bench's code, which is covered).
var recordSkip = []string{"bench/out/"}

// TestNoRecordWords fails on any line of the repository that cites an issue
// number, a seed number, a working session or a dated note, listing each as
// file:line.
func TestNoRecordWords(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := repoFiles(t, root)
	if len(files) < 100 {
		t.Fatalf("found %d files under %s; the walk is broken", len(files), root)
	}
	var found []string
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet in the index
			}
			t.Fatal(err)
		}
		found = append(found, recordFindings(rel, b)...)
	}
	if len(found) > 0 {
		t.Errorf("%d lines cite an issue, a seed, a session or a date instead of the behaviour:\n%s",
			len(found), strings.Join(found, "\n"))
	}
}

// recordFindings lists the lines of one file that break the rule, as
// "file:line: what: the line".
func recordFindings(rel string, content []byte) []string {
	var out []string
	md := strings.HasSuffix(rel, ".md")
	changelog := rel == "CHANGELOG.md"
	fence := false
	sc := bufio.NewScanner(bytes.NewReader(content))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		report := func(what string) {
			out = append(out, fmt.Sprintf("%s:%d: %s: %s", rel, n, what, strings.TrimSpace(line)))
		}
		for _, w := range recordWords {
			if w.re.MatchString(line) {
				report(w.what)
				break
			}
		}
		if !md {
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence || changelog && changelogVersion.MatchString(line) {
			continue
		}
		if mdDate.MatchString(stripInlineCode(line)) {
			report("a date")
		}
	}
	return out
}

// stripInlineCode drops `code spans` from a line of Markdown.
func stripInlineCode(line string) string {
	parts := strings.Split(line, "`")
	var b strings.Builder
	for i := 0; i < len(parts); i += 2 {
		b.WriteString(parts[i])
		b.WriteByte(' ')
	}
	return b.String()
}

// repoFiles lists the repository's files the rule covers: tracked ones and
// new ones git does not ignore, so a file is checked before it is added.
func repoFiles(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v", root, err)
	}
	var files []string
	seen := map[string]bool{}
	for _, rel := range strings.Split(string(out), "\x00") {
		if rel == "" || seen[rel] || !recordExts[filepath.Ext(rel)] {
			continue
		}
		seen[rel] = true
		skip := false
		for _, s := range recordSkip {
			skip = skip || strings.HasPrefix(rel, s)
		}
		if !skip {
			files = append(files, rel)
		}
	}
	return files
}

// The rule's matcher flags each form of a record word and lets through the
// words that only look alike: PostgreSQL and browser sessions, fuzz seed
// corpora, dates as example input.
func TestRecordWordsMatcher(t *testing.T) {
	t.Parallel()
	// Built from pieces so that this file does not break its own rule.
	join := func(s ...string) string { return strings.Join(s, "") }
	bad := map[string]string{
		"x.go":         join("// copied once (", "issue", " 13, item 3)"),
		"y.go":         join("// see ", "Issue", " #7"),
		"z.sql":        join("-- (", "seed", " 000's names)"),
		"a.md":         join("The ", "seed", " 002 tiers"),
		"b.md":         join("as ", "seed", " 3 says"),
		"c.js":         join("// measured in the fourth ", "session"),
		"d.sh":         join("# run ", "this", " morning"),
		"e.md":         join("What was run on ", "2026", "-11-30 to build it."),
		"f.md":         join("| full run (", "2026", "-12-02, fast disk) |"),
		"CHANGELOG.md": join("Fixed on ", "2026", "-12-04."),
	}
	for file, line := range bad {
		if got := recordFindings(file, []byte(line+"\n")); len(got) != 1 {
			t.Errorf("%s: %q: %d findings, want 1", file, line, len(got))
		}
	}
	good := map[string]string{
		"a.go":         "// LockID is the session advisory lock that elects the sweeping replica.",
		"b.go":         "SET session_replication_role = replica",
		"c.js":         "sessionStorage.setItem(TOKEN_KEY, t);",
		"d.go":         "func TestSeedsMatchStdlib(t *testing.T) { f.Add(seed) }",
		"e.go":         `{"tail", "q", "--from", "yesterday"}`,
		"f.md":         "`from=2024-01-31&to=2024-01-31` is the whole of the 31st.",
		"g.md":         "```\ncurl '/api/v1/dlq?from=2024-01-31'\n```",
		"CHANGELOG.md": "## [0.1.0] - 2026-12-04",
		"h.go":         "// timeFormat is 2006-01-02T15:04:05.000Z.",
		"i.md":         "A pytest fixture of session scope; the first message of a session.",
	}
	for file, text := range good {
		if got := recordFindings(file, []byte(text+"\n")); len(got) != 0 {
			t.Errorf("%s: %q: findings %v, want none", file, text, got)
		}
	}
}
