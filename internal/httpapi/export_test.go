package httpapi

import "testing"

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
// role it needs.
func RouteTable() []struct{ Pattern, Role string } {
	var out []struct{ Pattern, Role string }
	for _, r := range New(Config{}).table {
		out = append(out, struct{ Pattern, Role string }{r.pattern, r.role.String()})
	}
	return out
}
