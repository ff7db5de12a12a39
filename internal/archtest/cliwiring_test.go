package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// The CLI's command tree is built in one visible list by the root command
// (internal/cli/root.go); no file of internal/cli registers anything from
// an init function, whose order and effects a reader cannot see.
func TestCLIHasNoInit(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "cli")
	fset := token.NewFileSet()
	files, sawRoot := 0, false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil {
				continue
			}
			switch fn.Name.Name {
			case "init":
				t.Errorf("%s declares func init(); wire the command from NewRoot in internal/cli/root.go instead", fset.Position(fn.Pos()))
			case "NewRoot":
				sawRoot = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 || !sawRoot {
		t.Fatalf("read %d files of %s (NewRoot found: %v); expected the CLI package", files, dir, sawRoot)
	}
}
