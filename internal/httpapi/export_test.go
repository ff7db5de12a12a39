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
