package lease_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The lease rules are plain Go: besides the standard library they import
// only uuid (no database, no lethe package, no clock).
func TestLeaseIsPureGo(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(strings.SplitN(path, "/", 2)[0], ".") && path != "github.com/google/uuid" {
				t.Errorf("%s imports %s: the lease rules import only the standard library and uuid", f, path)
			}
		}
	}
}
