package httpapi

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/internal/clock"
)

// docRoute is a row of docs/api.md's route table.
type docRoute struct{ Pattern, Role string }

var docRouteRow = regexp.MustCompile("^\\| `([A-Z]+ /[^`]*)` \\| ([^|]+?) \\|$")

// docRoutes reads the "Routes and roles" table of docs/api.md.
func docRoutes(t testing.TB) []docRoute {
	t.Helper()
	raw, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []docRoute
	section := false
	for _, line := range regexp.MustCompile("\r?\n").Split(string(raw), -1) {
		switch {
		case line == "### Routes and roles":
			section = true
		case section && len(line) > 2 && line[:2] == "##":
			section = false
		case section:
			if m := docRouteRow.FindStringSubmatch(line); m != nil {
				out = append(out, docRoute{m[1], m[2]})
			}
		}
	}
	if len(out) == 0 {
		t.Fatal(`docs/api.md has no "### Routes and roles" table`)
	}
	return out
}

// Every registered route is in docs/api.md's table with the role the
// server enforces, and the table names no route the server lacks: a route
// added without a documented role fails here. The rows marked "test clock
// only" are served only with a test clock (LETHE_TEST_CLOCK=1): with one
// the server serves every row, without one every row but those.
func TestRouteTableMatchesTheDocs(t *testing.T) {
	t.Parallel()
	documented := map[string]string{}
	for _, d := range docRoutes(t) {
		if _, dup := documented[d.Pattern]; dup {
			t.Errorf("docs/api.md lists %s twice", d.Pattern)
		}
		documented[d.Pattern] = d.Role
	}
	for _, testClock := range []bool{true, false} {
		cfg := Config{}
		if testClock {
			cfg.TestClock = clock.NewOffset(clock.Real{})
		}
		registered := map[string]bool{}
		for _, r := range New(cfg).table {
			registered[r.pattern] = true
			role, ok := documented[r.pattern]
			switch {
			case !ok:
				t.Errorf("route %s (role %s) is not in docs/api.md's route table", r.pattern, r.docRole)
			case role != r.docRole:
				t.Errorf("route %s: docs/api.md says role %q, the server enforces %q", r.pattern, role, r.docRole)
			}
		}
		for pattern, role := range documented {
			want := testClock || !strings.HasSuffix(role, testOnlyDocSuffix)
			if registered[pattern] != want {
				t.Errorf("with test clock %v: docs/api.md lists %s (%s); served = %v, want %v",
					testClock, pattern, role, registered[pattern], want)
			}
		}
	}
}
