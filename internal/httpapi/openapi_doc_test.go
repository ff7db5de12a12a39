package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lethe-mq/lethe/internal/httpapi"
)

// openAPIDoc is openapi.json as the tests read it.
type openAPIDoc struct {
	Paths      map[string]map[string]openAPIOperation `json:"paths"`
	Components struct {
		Schemas   map[string]map[string]any      `json:"schemas"`
		Responses map[string]openAPIResponseSpec `json:"responses"`
	} `json:"components"`
}

type openAPIOperation struct {
	Role       string                         `json:"x-lethe-role"`
	Parameters []struct{ Name, In string }    `json:"parameters"`
	Responses  map[string]openAPIResponseSpec `json:"responses"`
}

type openAPIResponseSpec struct {
	Ref     string                                  `json:"$ref"`
	Content map[string]struct{ Schema any }         `json:"content"`
	Headers map[string]struct{ Description string } `json:"headers"`
}

func loadOpenAPI(t testing.TB) *openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	dec := json.NewDecoder(bytes.NewReader(httpapi.OpenAPI()))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return &doc
}

// openAPIPath turns a route pattern's path into the description's:
// "/{$}" is "/", "{name...}" is "{name}".
func openAPIPath(p string) string {
	p = strings.TrimSuffix(p, "{$}")
	if p == "" {
		p = "/"
	}
	return strings.ReplaceAll(p, "...}", "}")
}

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// Every route of the server's table is described with the role it needs,
// with a parameter for each path segment, and the description names no
// route the server lacks.
func TestOpenAPIHasEveryRoute(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	described := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			described[strings.ToUpper(method)+" "+path] = true
		}
	}
	for _, r := range httpapi.RouteTable() {
		method, p, _ := strings.Cut(r.Pattern, " ")
		path := openAPIPath(p)
		op, ok := doc.Paths[path][strings.ToLower(method)]
		if !ok {
			t.Errorf("route %s is not in openapi.json (as %s %s)", r.Pattern, method, path)
			continue
		}
		delete(described, method+" "+path)
		if op.Role != r.Role {
			t.Errorf("%s: openapi.json says x-lethe-role %q, the server enforces %q", r.Pattern, op.Role, r.Role)
		}
		for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
			if !hasParam(op, m[1]) {
				t.Errorf("%s: openapi.json declares no path parameter %q", r.Pattern, m[1])
			}
		}
		if len(op.Responses) == 0 {
			t.Errorf("%s: openapi.json describes no response", r.Pattern)
		}
	}
	for route := range described {
		t.Errorf("openapi.json describes %s, which the server does not serve", route)
	}
}

func hasParam(op openAPIOperation, name string) bool {
	for _, p := range op.Parameters {
		if p.In == "path" && p.Name == name {
			return true
		}
	}
	return false
}

// openAPIValidator is an http.RoundTripper that checks every answer
// against the description: the route and status must be described, the
// content type must be one the description names, and a JSON body must
// match its schema (fields the schema does not name fail).
type openAPIValidator struct {
	t       *testing.T
	doc     *openAPIDoc
	checker *schemaChecker
	mux     *http.ServeMux
	mu      sync.Mutex
	seen    map[string]bool // "METHOD /path status"
}

func newOpenAPIValidator(t *testing.T) *openAPIValidator {
	doc := loadOpenAPI(t)
	v := &openAPIValidator{t: t, doc: doc, checker: &schemaChecker{schemas: doc.Components.Schemas},
		mux: http.NewServeMux(), seen: map[string]bool{}}
	for path, ops := range doc.Paths {
		for method := range ops {
			pattern := strings.ToUpper(method) + " " + path
			if path == "/" {
				pattern += "{$}"
			}
			v.mux.Handle(pattern, http.NotFoundHandler())
		}
	}
	return v
}

// Client is an HTTP client whose every answer is checked.
func (v *openAPIValidator) Client() *http.Client { return &http.Client{Transport: v} }

func (v *openAPIValidator) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	what := fmt.Sprintf("%s %s → %d", req.Method, req.URL.RequestURI(), resp.StatusCode)
	for _, problem := range v.problems(req, resp, body) {
		v.t.Errorf("%s: %s\nbody: %s", what, problem, clipBody(body))
	}
	return resp, nil
}

func clipBody(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "..."
	}
	return string(b)
}

// problems lists how one answer departs from the description.
func (v *openAPIValidator) problems(req *http.Request, resp *http.Response, body []byte) []string {
	_, pattern := v.mux.Handler(req)
	if pattern == "" || strings.HasPrefix(pattern, "/") { // no route (404, 405): an error body
		if resp.StatusCode < 400 {
			return []string{"the description has no such route"}
		}
		return v.checkBody(resp, body, map[string]any{"$ref": "#/components/schemas/Error"}, "application/json")
	}
	method, path, _ := strings.Cut(pattern, " ")
	path = strings.TrimSuffix(path, "{$}")
	status := strconv.Itoa(resp.StatusCode)
	v.mu.Lock()
	v.seen[method+" "+path+" "+status] = true
	v.mu.Unlock()
	op := v.doc.Paths[path][strings.ToLower(method)]
	spec, ok := op.Responses[status]
	if !ok {
		return []string{fmt.Sprintf("status %s is not described for %s %s", status, method, path)}
	}
	if spec.Ref != "" {
		spec = v.doc.Components.Responses[strings.TrimPrefix(spec.Ref, "#/components/responses/")]
	}
	for name := range spec.Headers {
		if resp.Header.Get(name) == "" {
			return []string{fmt.Sprintf("header %s is described but not sent", name)}
		}
	}
	if len(spec.Content) == 0 {
		if len(body) != 0 && req.Method != http.MethodHead {
			return []string{"the description says no body, the server sent one"}
		}
		return nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	media, ok := spec.Content[ct]
	if !ok {
		return []string{fmt.Sprintf("content type %q is not described", ct)}
	}
	if ct != "application/json" || req.Method == http.MethodHead {
		return nil
	}
	schema, _ := media.Schema.(map[string]any)
	return v.checkBody(resp, body, schema, ct)
}

func (v *openAPIValidator) checkBody(resp *http.Response, body []byte, schema map[string]any, want string) []string {
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != want {
		return []string{fmt.Sprintf("content type %q, want %s", ct, want)}
	}
	var val any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&val); err != nil {
		return []string{fmt.Sprintf("body is not JSON: %v", err)}
	}
	return v.checker.check("$", schema, val)
}

// covered reports whether an answer with status was seen for route.
func (v *openAPIValidator) covered(route string, status int) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.seen[route+" "+strconv.Itoa(status)]
}
