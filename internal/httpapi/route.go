package httpapi

import (
	"net/http"

	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/auth"
)

// unmatchedRoute labels requests no route serves (404 and 405).
const unmatchedRoute = "unmatched"

// handlerFunc is a route's handler: it writes the answer, or returns the
// error that fail turns into one.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// route is one entry of the route table.
type route struct {
	pattern string // "METHOD /path/{param}"
	role    auth.Role
	// docRole is the role as docs/api.md's route table spells it.
	docRole string
}

// handle registers pattern with the role its callers need.
func (s *Server) handle(pattern string, role auth.Role, h handlerFunc) {
	s.handleDoc(pattern, role, role.String(), h)
}

// handleDoc is handle for a route whose handler asks for more than role in
// some cases, which docRole says.
func (s *Server) handleDoc(pattern string, role auth.Role, docRole string, h handlerFunc) {
	s.table = append(s.table, route{pattern: pattern, role: role, docRole: docRole})
	s.mux.Handle(pattern, s.observe(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := s.auth.Check(r, role)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		r = r.WithContext(auth.WithIdentity(r.Context(), id))
		r, release := s.withBodyCharge(r, id)
		defer release()
		if err := h(w, r); err != nil {
			s.fail(w, r, err)
		}
	})))
}

// dispatch serves r through the route table; a request no route serves
// answers 405 (another method serves the path) or 404, in JSON.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	if _, pattern := s.mux.Handler(r); pattern == "" {
		s.unmatched.ServeHTTP(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	// The mux's own answer says whether other methods serve the path.
	probe := &allowProbe{header: http.Header{}}
	h, _ := s.mux.Handler(r)
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		allow := probe.header.Get("Allow")
		w.Header().Set("Allow", allow)
		s.fail(w, r, apierr.New(apierr.MethodNotAllowed, "%s is not served for %s; use %s (see docs/api.md)", r.Method, r.URL.Path, allow))
		return
	}
	s.fail(w, r, apierr.New(apierr.NotFound, "no route for %s %s; see the API reference in docs/api.md", r.Method, r.URL.Path))
}

// allowProbe records the status and headers the mux would answer with.
type allowProbe struct {
	header http.Header
	status int
}

func (p *allowProbe) Header() http.Header         { return p.header }
func (p *allowProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *allowProbe) WriteHeader(code int)        { p.status = code }
