package httpapi

import (
	"testing"

	"github.com/lethe-mq/lethe/internal/clock"
)

// DocRoutes is docs/api.md's route table, for the external tests that walk
// every route; TestRouteTableMatchesTheDocs proves it is the server's.
func DocRoutes(t testing.TB) []struct{ Pattern, Role string } {
	var out []struct{ Pattern, Role string }
	for _, d := range docRoutes(t) {
		out = append(out, struct{ Pattern, Role string }{d.Pattern, d.Role})
	}
	return out
}

// RouteTable is the server's route table: each route's pattern and the
// role it needs, the test-only routes (LETHE_TEST_CLOCK=1) included.
func RouteTable() []struct{ Pattern, Role string } {
	var out []struct{ Pattern, Role string }
	for _, r := range New(Config{TestClock: clock.NewOffset(clock.Real{})}).table {
		out = append(out, struct{ Pattern, Role string }{r.pattern, r.role.String()})
	}
	return out
}
