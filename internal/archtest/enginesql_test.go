package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// engineSQLAllowed are the files of internal/engine that may hold SQL on
// lethe's tables in their own string literals, each with why: none. Every
// statement of the engine sits behind a named function of internal/store
// (or of the package that owns the table), the hot path's too: a statement
// queued in a pipelined batch is answered by store as its text and
// arguments (store.SaveCursorStmt). docs/ARCHITECTURE.md ("The engine's
// own SQL") says so. The list only shrinks.
var engineSQLAllowed = map[string]string{}

// lethe's tables and functions named in SQL text.
var letheSQL = regexp.MustCompile(`\blethe\.[a-z_]+`)

// No file of the engine but the allowed ones holds SQL text: a string
// literal that names one of lethe's tables or functions.
func TestEngineSQLIsInTheStore(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs("../engine")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d files in %s; expected the engine", len(files), dir)
	}
	var found []string
	for _, path := range files {
		name := filepath.Base(path)
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		ast.Inspect(f, func(node ast.Node) bool {
			if lit, ok := node.(*ast.BasicLit); ok && lit.Kind == token.STRING && letheSQL.MatchString(lit.Value) {
				n++
			}
			return true
		})
		if n == 0 {
			continue
		}
		found = append(found, name)
		if _, ok := engineSQLAllowed[name]; !ok {
			t.Errorf("internal/engine/%s holds %d SQL statement(s) on lethe's tables: put each behind a named function of internal/store "+
				"(or of the package that owns the table)", name, n)
		}
	}
	for name := range engineSQLAllowed {
		if !slices.Contains(found, name) {
			t.Errorf("internal/engine/%s holds no SQL any more: take it off engineSQLAllowed", name)
		}
	}
}
