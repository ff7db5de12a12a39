package schema

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// The numbered migrations start from one baseline, the whole schema
// written by concern. The chain it replaced (versions 1 to 157) is no
// longer in the binary: a database at the chain's last migration already
// holds every object of the baseline, so it is adopted (the baseline is
// recorded, not run); an older one is refused with what to do.
const (
	baselineVersion = 200
	legacyLast      = 157
	// legacyRelease is the last lethe release that carries the chain.
	legacyRelease = "0.1.0"
)

// legacyVersions are the migrations of the replaced chain, in order. Their
// rows stay in lethe.schema_migrations of an adopted database, so the
// replicas of a release that still carries the chain find every one of
// theirs and stay ready.
var legacyVersions = []int{1, 2, 3, 10, 11, 20, 21, 50, 51, 52, 53, 70, 71, 72, 80, 81, 90,
	100, 110, 120, 130, 131, 140, 150, 151, 152, 153, 154, 155, 156, 157}

// LegacyVersions lists the versions of the replaced chain.
func LegacyVersions() []int { return slices.Clone(legacyVersions) }

// adoptLegacy records the baseline as applied on a database the complete
// old chain migrated, and refuses one it migrated only part way, before
// anything is written. It reports whether it adopted.
func adoptLegacy(ctx context.Context, conn *pgx.Conn, applied map[int]bool) (bool, error) {
	if applied[baselineVersion] {
		return false, nil
	}
	newest, complete := 0, true
	for _, v := range legacyVersions {
		if applied[v] {
			newest = max(newest, v)
		} else {
			complete = false
		}
	}
	if newest == 0 {
		return false, nil // a fresh database, or one this lethe made
	}
	if !complete {
		var missing []int
		for _, v := range legacyVersions {
			if !applied[v] {
				missing = append(missing, v)
			}
		}
		return false, fmt.Errorf("migrate: the lethe schema of this database is at migration %d (it lacks %v); this lethe "+
			"adopts a database only at migration %d, the last one of the chain it no longer replays: start lethe %s "+
			"(or any lethe from before the schema baseline) once on this database to migrate it to %d, then start this one",
			newest, missing, legacyLast, legacyRelease, legacyLast)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO lethe.schema_migrations (version, name) VALUES ($1, 'baseline')",
		baselineVersion); err != nil {
		return false, fmt.Errorf("migrate: adopt the schema of migration %d: %w%s", legacyLast, err, privilegeHint(ctx, conn, err))
	}
	applied[baselineVersion] = true
	return true, nil
}
