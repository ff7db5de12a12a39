package schema_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/lethe-mq/lethe/internal/pgembed"
	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/schema"
	"github.com/lethe-mq/lethe/internal/schema/schematest"
)

var update = flag.Bool("update", false, "rewrite schema.sql from a freshly migrated database")

const regenerate = "go test ./internal/schema -run TestSchemaSQL -update"

// dumpSchema is the normalised pg_dump --schema-only of schema lethe: no
// header, SET lines, "-- Name:" comments, owners, nor runs of blank lines.
func dumpSchema(t *testing.T, dsn string) string {
	t.Helper()
	bin, err := pgembed.FindBinDir()
	if err != nil {
		t.Fatalf("find pg_dump: %v", err)
	}
	cmd := exec.Command(filepath.Join(bin, "pg_dump"), "--schema-only", "--schema=lethe", "--no-owner", "--dbname="+dsn)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pg_dump: %v: %s", err, stderr.String())
	}
	return normalize(string(out))
}

var blankRuns = regexp.MustCompile(`\n{3,}`)

func normalize(dump string) string {
	var keep []string
	for _, l := range strings.Split(dump, "\n") {
		switch {
		case l == "--",
			strings.HasPrefix(l, "-- Name: "),
			strings.HasPrefix(l, "-- Dumped "),
			strings.HasPrefix(l, "-- PostgreSQL database dump"),
			strings.HasPrefix(l, `\restrict`), strings.HasPrefix(l, `\unrestrict`),
			strings.HasPrefix(l, "SET "),
			strings.HasPrefix(l, "SELECT pg_catalog.set_config("):
			continue
		}
		keep = append(keep, l)
	}
	return strings.TrimSpace(blankRuns.ReplaceAllString(strings.Join(keep, "\n"), "\n\n")) + "\n"
}

// diff is a unified diff of want and got, by diff(1) when there is one.
func diff(t *testing.T, want, got string) string {
	t.Helper()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "schema.sql"), filepath.Join(dir, "database.sql")
	if os.WriteFile(a, []byte(want), 0o600) != nil || os.WriteFile(b, []byte(got), 0o600) != nil {
		return "(cannot write the diff's files)"
	}
	out, _ := exec.Command("diff", "-u", a, b).CombinedOutput()
	return string(out)
}

func compareWithSchemaSQL(t *testing.T, what, got string) {
	t.Helper()
	want, err := os.ReadFile("schema.sql")
	if err != nil {
		t.Fatalf("read schema.sql: %v (regenerate it: %s)", err, regenerate)
	}
	if string(want) != got {
		t.Errorf("%s does not dump as schema.sql; if the change is meant, regenerate it: %s\n%s",
			what, regenerate, diff(t, string(want), got))
	}
}

// schema.sql is what a freshly migrated database holds.
func TestSchemaSQL(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewEmptyDatabase(t)
	pool := newPool(t, dsn)
	if _, err := schema.Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	got := dumpSchema(t, dsn)
	if *update {
		if err := os.WriteFile("schema.sql", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	compareWithSchemaSQL(t, "a freshly migrated database", got)
}

// A database the replaced chain migrated to its last version is adopted:
// the baseline is recorded, not run, the function files bring the
// functions to their definitions, and it dumps as a fresh database does.
// Its old rows stay, so the replicas of a release carrying the chain stay
// ready, and this binary's readiness counts them as known.
func TestSchemaSQLAfterAdoption(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.NewEmptyDatabase(t)
	pool := newPool(t, dsn)
	if err := schematest.ApplyLegacy(ctx, pool, schematest.All); err != nil {
		t.Fatal(err)
	}
	applied, err := schema.Migrate(ctx, pool)
	if err != nil {
		t.Fatalf("migrate a database of the replaced chain: %v", err)
	}
	if want := []int{schema.BaselineVersion}; !slices.Equal(applied, want) {
		t.Errorf("adoption applied %v, want %v (the baseline, recorded)", applied, want)
	}
	if !*update {
		compareWithSchemaSQL(t, "a database adopted from the replaced chain", dumpSchema(t, dsn))
	}
	var versions []int
	rows, err := pool.Query(ctx, `SELECT version FROM lethe.schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, v)
	}
	if want := append(schema.LegacyVersions(), schema.BaselineVersion); !slices.Equal(versions, want) {
		t.Errorf("schema_migrations after adoption = %v, want %v", versions, want)
	}
	r, err := schema.Check(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Ready() || len(r.Unknown) != 0 || r.Applied != schema.BaselineVersion {
		t.Errorf("readiness of the adopted database = %+v, want ready, nothing unknown, at %d", r, schema.BaselineVersion)
	}
	if again, err := schema.Migrate(ctx, pool); err != nil || len(again) != 0 || repeatableRows(t, pool) != 1 {
		t.Errorf("migrating the adopted database again applied %v (%v), %d function applications; want nothing, 1",
			again, err, repeatableRows(t, pool))
	}
}

// The files of the replaced chain are the versions the binary knows it by.
func TestLegacyVersionsAreTheChainsFiles(t *testing.T) {
	migs, err := schematest.Legacy()
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, m := range migs {
		got = append(got, m.Version)
	}
	if !slices.Equal(got, schema.LegacyVersions()) || got[len(got)-1] != schema.LegacyLast {
		t.Errorf("testdata/legacy holds %v, the binary knows %v (last %d)", got, schema.LegacyVersions(), schema.LegacyLast)
	}
	all, err := schema.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if all[0].Version != schema.BaselineVersion || all[0].Version <= schema.LegacyLast {
		t.Errorf("the first embedded migration is %d, want the baseline %d, after the chain's %d",
			all[0].Version, schema.BaselineVersion, schema.LegacyLast)
	}
}

// A database the replaced chain left part way is refused with what to do,
// and nothing is written to it.
func TestMigrateRefusesAPartialChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.NewEmptyDatabase(t)
	pool := newPool(t, dsn)
	if err := schematest.ApplyLegacy(ctx, pool, func(v int) bool { return v <= 100 }); err != nil {
		t.Fatal(err)
	}
	before := dumpSchema(t, dsn)
	var rowsBefore string
	if err := pool.QueryRow(ctx, `SELECT string_agg(version::text || name || applied_at::text, ',' ORDER BY version)
		FROM lethe.schema_migrations`).Scan(&rowsBefore); err != nil {
		t.Fatal(err)
	}
	applied, err := schema.Migrate(ctx, pool)
	if err == nil {
		t.Fatalf("migrate of a database at 100 applied %v, want it refused", applied)
	}
	for _, want := range []string{"at migration 100", fmt.Sprintf("lethe %s", schema.LegacyRelease),
		fmt.Sprintf("migrate it to %d", schema.LegacyLast)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	var rowsAfter string
	if err := pool.QueryRow(ctx, `SELECT string_agg(version::text || name || applied_at::text, ',' ORDER BY version)
		FROM lethe.schema_migrations`).Scan(&rowsAfter); err != nil {
		t.Fatal(err)
	}
	if after := dumpSchema(t, dsn); after != before || rowsAfter != rowsBefore {
		t.Errorf("the refused migrate wrote to the database:\n%s", diff(t, before, after))
	}
	if r, err := schema.Check(ctx, pool); err != nil || r.Ready() {
		t.Errorf("readiness of the refused database = %+v (%v), want not ready", r, err)
	}
}

// The function files are applied again only when their checksum changes;
// /ready wants this binary's checksum recorded.
func TestFunctionsAppliedWhenTheirChecksumChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t, pgtest.NewEmptyDatabase(t))
	if _, err := schema.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if n := repeatableRows(t, pool); n != 1 {
		t.Fatalf("two starts with the same function files applied them %d times, want once", n)
	}

	changed := fstest.MapFS{}
	if err := fs.WalkDir(schema.FunctionsFS, "functions", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(schema.FunctionsFS, p)
		changed[p] = &fstest.MapFile{Data: body}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	changed["functions/views.sql"].Data = append(slices.Clone(changed["functions/views.sql"].Data),
		[]byte("\nCREATE OR REPLACE FUNCTION lethe.checksum_probe() RETURNS int LANGUAGE sql AS 'SELECT 7';\n")...)
	for range 2 {
		if _, err := schema.MigrateWithFunctions(ctx, pool, changed); err != nil {
			t.Fatal(err)
		}
	}
	var seven int
	if err := pool.QueryRow(ctx, `SELECT lethe.checksum_probe()`).Scan(&seven); err != nil || seven != 7 {
		t.Fatalf("the changed function files were not applied: %d, %v", seven, err)
	}
	if n := repeatableRows(t, pool); n != 2 {
		t.Errorf("function files applied %d times over a change and a restart, want twice", n)
	}

	// The embedded files' checksum was recorded first: still ready.
	if r, err := schema.Check(ctx, pool); err != nil || !r.Ready() {
		t.Fatalf("readiness = %+v (%v), want ready", r, err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM lethe.schema_repeatables WHERE checksum = $1`, mustChecksum(t)); err != nil {
		t.Fatal(err)
	}
	r, err := schema.Check(ctx, pool)
	if err != nil || r.Ready() || !r.FunctionsMissing || len(r.Missing) != 0 {
		t.Errorf("readiness without this binary's function checksum = %+v (%v), want not ready, functions missing", r, err)
	}
}

func mustChecksum(t *testing.T) string {
	t.Helper()
	f, err := schema.LoadFunctions()
	if err != nil {
		t.Fatal(err)
	}
	return f.Checksum
}
