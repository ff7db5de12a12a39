package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// lethe doctor prints every check with what it found; a warning leaves
// the exit status 0, a failure makes it 1 and prints the fix.
func TestDoctor(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	s := "--server=" + srv.URL

	// No cycle has run yet (the test server's loop is off): a warning.
	out := mustLethe(t, "", "doctor", s)
	wantContains(t, out, "WARN  retention-loop: the retention loop runs", "no replica has run a retention cycle",
		"OK    public-grants", "OK    retention-indexes", "overall: warn")

	if _, err := srv.Retention.RunCycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep := decode[api.DoctorReport](t, mustLethe(t, "", "doctor", s, "--json"))
	if rep.Status != api.DoctorOK || len(rep.Checks) != 7 {
		t.Fatalf("after a cycle: %+v, want all 7 checks ok", rep)
	}

	conn, err := pgx.Connect(context.Background(), srv.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `GRANT SELECT ON lethe.cursors TO PUBLIC`); err != nil {
		t.Fatal(err)
	}
	out, err = lethe(t, "", "doctor", s)
	if err == nil || !strings.Contains(err.Error(), "1 check failed: public-grants") {
		t.Fatalf("doctor with a grant to PUBLIC: %v, want it to fail on public-grants\n%s", err, out)
	}
	wantContains(t, out, "FAIL  public-grants", "table lethe.cursors (SELECT)", "fix: REVOKE ALL ON SCHEMA lethe FROM PUBLIC", "overall: fail")
}
