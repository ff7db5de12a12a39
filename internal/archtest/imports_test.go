package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/lethe-mq/lethe/"

// pkg is what `go list -json` says of one package.
type pkg struct {
	ImportPath   string
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
}

// listPackages lists every package of the server's module.
func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[strings.TrimPrefix(p.ImportPath, module)] = p
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages of %s; expected the whole module", len(pkgs), module)
	}
	return pkgs
}

// own keeps lethe's packages of paths, without the module prefix.
func own(paths []string) []string {
	var out []string
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(p, module); ok {
			out = append(out, rest)
		} else if p == strings.TrimSuffix(module, "/") {
			out = append(out, ".")
		}
	}
	return out
}

// The rules of docs/ARCHITECTURE.md, "Import direction".
func TestImportDirection(t *testing.T) {
	t.Parallel()
	pkgs := listPackages(t)
	for name, p := range pkgs {
		imports := own(p.Imports)
		tests := own(append(slices.Clone(p.TestImports), p.XTestImports...))
		// Only app assembles the HTTP surface; the fault suite's tests
		// drive a replica through it.
		if name != "internal/app" && name != "internal/httpapi" && slices.Contains(imports, "internal/httpapi") {
			t.Errorf("%s imports internal/httpapi; only internal/app may", name)
		}
		if name != "internal/faults" && name != "internal/httpapi" && slices.Contains(tests, "internal/httpapi") {
			t.Errorf("the tests of %s import internal/httpapi; only internal/faults' may", name)
		}
		// The CLI speaks the API: its wire types are api's.
		if name == "internal/cli" || strings.HasPrefix(name, "internal/cli/") {
			for _, banned := range []string{"internal/retention", "internal/inspect", "internal/engine", "internal/store"} {
				if slices.Contains(imports, banned) {
					t.Errorf("%s imports %s; the CLI decodes answers into api types only", name, banned)
				}
			}
		}
	}
	// The storage layer stands on frame alone.
	if got := own(pkgs["internal/store"].Imports); !slices.Equal(got, []string{"internal/frame"}) {
		t.Errorf("internal/store imports %v of lethe's packages; it may import internal/frame only", got)
	}
	// Queue configuration stands beside the log: it reaches the engine
	// through the small interface the engine satisfies, not its code.
	for _, dep := range own(pkgs["internal/queueopts"].Deps) {
		if dep == "internal/engine" {
			t.Errorf("internal/queueopts depends on internal/engine; it takes the engine as its queueopts.Engine interface")
		}
	}
	// The read models read; they never reach the log's code, the
	// retention loop or the HTTP surface, directly or not.
	for _, dep := range own(pkgs["internal/inspect"].Deps) {
		if dep == "internal/engine" || dep == "internal/httpapi" || dep == "internal/retention" || dep == "internal/lease" {
			t.Errorf("internal/inspect depends on %s; it may use store, api and the small shared packages only", dep)
		}
	}
}

// segmentSQLAllowed are the files outside the storage layer that still
// name the segment tables, each said in docs/ARCHITECTURE.md ("What still
// reads segments/txns outside the store"). The list only shrinks.
var segmentSQLAllowed = []string{"internal/retention/status.go"}

// Only the storage layer writes SQL on lethe.segments and lethe.txns (and
// the migrations, which define its functions).
func TestSegmentSQLStaysInTheStore(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(`lethe\.(segments|txns)\b`)
	var found []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && (rel == "internal/store" || rel == "bench" || strings.HasPrefix(d.Name(), ".")) && rel != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if named.Match(src) {
			found = append(found, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		if !slices.Contains(segmentSQLAllowed, f) {
			t.Errorf("%s names lethe.segments or lethe.txns: read and write them through internal/store", f)
		}
	}
	for _, f := range segmentSQLAllowed {
		if !slices.Contains(found, f) {
			t.Errorf("%s no longer names the segment tables: take it off segmentSQLAllowed", f)
		}
	}
}

// tableOwners are tables that only their owning packages write (INSERT,
// UPDATE or DELETE in its SQL); others may read them. The engine is the
// log: a table that is not the log's gets a package of its own. A table
// has more than one owner where the log needs its row too, each owner
// said here: lethe.queues is configured by queueopts, and created with
// the defaults by a queue's first push and deleted with the log through
// the store's functions the engine calls.
var tableOwners = map[string][]string{
	"retention_holds": {"internal/holds"},
	"queues":          {"internal/queueopts", "internal/store"},
}

// Each table in tableOwners is written by its owner alone.
func TestTablesAreWrittenByTheirOwner(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for table, owners := range tableOwners {
		write := regexp.MustCompile(`(?is)\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+lethe\.` + table + `\b`)
		err := filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if d.IsDir() || !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || slices.Contains(owners, filepath.ToSlash(filepath.Dir(rel))) {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if write.Match(src) {
				t.Errorf("%s writes lethe.%s; only %s may (call it instead)", rel, table, strings.Join(owners, " and "))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
