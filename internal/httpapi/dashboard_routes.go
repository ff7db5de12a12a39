package httpapi

import (
	"net/http"

	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/dashboard"
)

// dashboardRoutes serves the web dashboard (package dashboard): its page
// and assets are public; every figure it shows comes from the API routes,
// called by the browser with the user's token.
func (s *Server) dashboardRoutes() {
	s.handle("GET /{$}", public, s.dashboardFile)
	s.handle("GET /dashboard/{file}", public, s.dashboardFile)
}

func (s *Server) dashboardFile(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("file")
	if r.URL.Path == "/" {
		name = dashboard.Index
	}
	a, ok := dashboard.Open(name)
	if !ok {
		return apierr.New(apierr.NotFound, "the dashboard has no file %q; open / for the dashboard", name)
	}
	a.ServeHTTP(w, r)
	return nil
}
