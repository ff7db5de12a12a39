package httpapi

import (
	_ "embed"
	"net/http"
	"strconv"
)

// openAPI is the OpenAPI 3.1 description of every route. The tests keep it
// true: every route of the table is in it (TestOpenAPIHasEveryRoute), and
// real answers match its schemas, which refuse fields they do not name
// (TestResponsesMatchOpenAPI).
//
//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the description served at /api/v1/openapi.json.
func OpenAPI() []byte { return openAPI }

func (s *Server) openAPIDocument(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(openAPI)))
	w.Header().Set("Cache-Control", "no-cache")
	_, err := w.Write(openAPI)
	return err
}
