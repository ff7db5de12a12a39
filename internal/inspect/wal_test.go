package inspect

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/pgtest"
)

// The WAL's size is shown to a role that may list the folder, and a role
// that may not is told what to grant, without an error.
func TestWALUsageNeedsPgMonitor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	admin := walPool(t, dsn)
	w, err := New(Config{Pool: admin}).walUsage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w.Bytes == nil || *w.Bytes <= 0 || w.Files == nil || *w.Files == 0 || w.Unavailable != "" {
		t.Fatalf("superuser: %+v, want the WAL folder's size", w)
	}
	if w.MaxWALSize == "" || w.MinWALSize == "" || w.CheckpointTimeout == "" {
		t.Fatalf("settings missing: %+v", w)
	}

	role, as := pgtest.NewRole(t, "lethe_app")
	app := walPool(t, as(dsn))
	w, err = New(Config{Pool: app}).walUsage(ctx)
	if err != nil {
		t.Fatalf("an unprivileged role got an error instead of a note: %v", err)
	}
	if w.Bytes != nil || w.Unavailable != walRefused || w.MaxWALSize == "" {
		t.Fatalf("unprivileged role: %+v, want no size, the note and the settings", w)
	}

	if _, err := admin.Exec(ctx, "GRANT pg_monitor TO "+pgx.Identifier{role}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	if w, err = New(Config{Pool: app}).walUsage(ctx); err != nil || w.Bytes == nil || w.Unavailable != "" {
		t.Fatalf("with pg_monitor: %+v, %v; want the size", w, err)
	}
}

func walPool(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}
