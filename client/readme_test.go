package client_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// goBlock is a fenced Go block of a Markdown file.
var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// squash makes code comparable whatever its indentation and line breaks.
func squash(code string) string { return strings.Join(strings.Fields(code), " ") }

// README.md shows the bodies of the Example functions of example_test.go,
// which go vet and go test compile: every Go block of the README is one
// example's body and every example is in the README, so neither drifts.
func TestReadmeBlocksAreExamples(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range goBlock.FindAllStringSubmatch(string(readme), -1) {
		blocks = append(blocks, squash(m[1]))
	}

	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "example_test.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	examples := map[string]string{} // body by function name
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || !strings.HasPrefix(fn.Name.Name, "Example") {
			continue
		}
		body := src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset]
		examples[fn.Name.Name] = squash(string(body))
	}
	if len(blocks) < 5 || len(examples) < 5 {
		t.Fatalf("README.md has %d Go blocks and example_test.go %d examples; want push, consume, ack, errors and cancellation in both",
			len(blocks), len(examples))
	}

	for i, b := range blocks {
		found := false
		for _, body := range examples {
			found = found || body == b
		}
		if !found {
			t.Errorf("README.md's Go block %d is no Example's body in example_test.go:\n%s", i+1, b)
		}
	}
	for name, body := range examples {
		if !slices.Contains(blocks, body) {
			t.Errorf("%s is not a Go block of README.md", name)
		}
	}
}
