package version

import (
	"fmt"
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestInfo(t *testing.T) {
	t.Parallel()
	withVCS := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"},
			{Key: "vcs.modified", Value: "true"},
		}}, true
	}
	clean := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "fedcba9876543210"}}}, true
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	cases := []struct {
		version    string
		read       func() (*debug.BuildInfo, bool)
		want, long string
	}{
		{"0.1.0", withVCS, "0.1.0 (0123456789ab, modified)", "0.1.0 (revision 0123456789ab, modified, GO)"},
		{"v1.2.3", withVCS, "v1.2.3 (0123456789ab, modified)", "v1.2.3 (revision 0123456789ab, modified, GO)"},
		{"0.1.0", clean, "0.1.0 (fedcba987654)", "0.1.0 (revision fedcba987654, GO)"},
		{"v1.2.3", none, "v1.2.3", "v1.2.3 (GO)"},
		{"0.1.0", func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{}, true }, "0.1.0", "0.1.0 (GO)"},
	}
	for _, c := range cases {
		info := fromBuildInfo(c.version, c.read)
		if got := info.String(); got != c.want {
			t.Errorf("version %q: String %q, want %q", c.version, got, c.want)
		}
		if got, want := info.Long(), strings.Replace(c.long, "GO", info.GoVersion, 1); got != want {
			t.Errorf("version %q: Long %q, want %q", c.version, got, want)
		}
	}
	if got := Get(); got.Version != Version || !strings.HasPrefix(got.GoVersion, "go") {
		t.Errorf("Get() = %+v, want Version %q and a Go version", got, Version)
	}
}

// An unstamped build reports Release: tests are built without -ldflags -X.
func TestVersionDefaultsToRelease(t *testing.T) {
	t.Parallel()
	if Version != Release {
		t.Fatalf("Version = %q without -ldflags, want Release %q", Version, Release)
	}
}

// changelogHeading is a version heading of CHANGELOG.md.
var changelogHeading = regexp.MustCompile(`^## \[([^\]]+)\](.*)$`)

// released is a released version's heading: a semantic version and its
// date, as Keep a Changelog writes them.
var released = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)$`)

// Release is the newest version CHANGELOG.md releases, and the changelog
// has the shape cutting a version relies on: an Unreleased section first,
// then released versions, newest first, each with its date.
func TestReleaseIsTheChangelogsNewest(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	newest, err := newestRelease(string(b))
	if err != nil {
		t.Fatalf("CHANGELOG.md: %v", err)
	}
	if newest != Release {
		t.Fatalf("CHANGELOG.md's newest release is %s, Release is %s: cut both together (docs/releasing.md)", newest, Release)
	}
}

// newestRelease checks a changelog's headings and returns its newest
// released version.
func newestRelease(changelog string) (string, error) {
	var versions []string
	var last [3]int
	for n, line := range strings.Split(changelog, "\n") {
		m := changelogHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name, rest := m[1], m[2]
		if name == "Unreleased" {
			if len(versions) > 0 || rest != "" {
				return "", fmt.Errorf("line %d: %q: the Unreleased section comes first, with no date", n+1, line)
			}
			versions = append(versions, name)
			continue
		}
		if len(versions) == 0 {
			return "", fmt.Errorf("line %d: %q before the Unreleased section", n+1, line)
		}
		v := released.FindStringSubmatch(name)
		date, ok := strings.CutPrefix(rest, " - ")
		if v == nil || !ok {
			return "", fmt.Errorf("line %d: %q: want ## [X.Y.Z] - YYYY-MM-DD", n+1, line)
		}
		if _, err := time.Parse(time.DateOnly, date); err != nil {
			return "", fmt.Errorf("line %d: %q: the date: %w", n+1, line, err)
		}
		var cur [3]int
		for i := range cur {
			for _, d := range v[i+1] {
				cur[i] = cur[i]*10 + int(d-'0')
			}
		}
		if len(versions) > 1 && !less(cur, last) {
			return "", fmt.Errorf("line %d: %s is not older than %s above it", n+1, name, versions[len(versions)-1])
		}
		last = cur
		versions = append(versions, name)
	}
	if len(versions) < 2 {
		return "", fmt.Errorf("no released version (## [X.Y.Z] - YYYY-MM-DD)")
	}
	return versions[1], nil
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// The check refuses each way a changelog can go out of shape.
func TestNewestReleaseRefusesAMisshapenChangelog(t *testing.T) {
	t.Parallel()
	good := "# Changelog\n\n## [Unreleased]\n\n- a\n\n## [0.10.0] - 2027-01-02\n\n## [0.9.1] - 2026-12-04\n"
	if v, err := newestRelease(good); err != nil || v != "0.10.0" {
		t.Fatalf("newestRelease(good) = %q, %v; want 0.10.0", v, err)
	}
	for name, bad := range map[string]string{
		"no Unreleased":     "## [0.1.0] - 2026-12-04\n",
		"Unreleased second": "## [0.1.0] - 2026-12-04\n## [Unreleased]\n",
		"Unreleased dated":  "## [Unreleased] - 2026-12-04\n## [0.1.0] - 2026-12-04\n",
		"no release":        "## [Unreleased]\n",
		"no date":           "## [Unreleased]\n## [0.1.0]\n",
		"a bad date":        "## [Unreleased]\n## [0.1.0] - 2026-13-04\n",
		"a v prefix":        "## [Unreleased]\n## [v0.1.0] - 2026-12-04\n",
		"oldest first":      "## [Unreleased]\n## [0.1.0] - 2026-12-04\n## [0.2.0] - 2026-12-05\n",
		"the same twice":    "## [Unreleased]\n## [0.1.0] - 2026-12-04\n## [0.1.0] - 2026-12-04\n",
	} {
		if v, err := newestRelease(bad); err == nil {
			t.Errorf("%s: newestRelease = %q, want an error", name, v)
		}
	}
}
