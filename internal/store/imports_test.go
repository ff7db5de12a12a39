package store_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// allowedImports checks that the non-test Go files of dir import, of
// lethe's own packages, only those allowed, and nothing outside the
// standard library but those allowed: the import direction the
// architecture states.
func allowedImports(t *testing.T, dir string, allowed ...string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
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
			std := !strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
			if !std && !contains(allowed, path) {
				t.Errorf("%s imports %s; allowed besides the standard library: %v", f, path, allowed)
			}
		}
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestStoreImportsOnlyFrame(t *testing.T) {
	t.Parallel()
	allowedImports(t, ".", "github.com/lethe-mq/lethe/internal/frame",
		"github.com/google/uuid", "github.com/jackc/pgx/v5", "github.com/jackc/pgx/v5/pgconn")
}
