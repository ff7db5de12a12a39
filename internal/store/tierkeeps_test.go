package store_test

import (
	"strings"
	"testing"
)

// lethe.segment_leaf_hi, the one-expression end of a segment tier's leaf
// that lethe.tier_keeps uses (migration 140), is lethe.leaf_range's hi
// for every segment tier, at instants spread over two years and at every
// kind of leaf boundary; tier_keeps answers as leaf_range would; and the
// planner inlines tier_keeps and settle_action (no per-call parse and
// plan, which cost a settle step up to a millisecond per segment).
func TestTierKeepsMatchesLeafRange(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var checked, wrongHi, wrongKeeps int64
	err := e.pool.QueryRow(e.ctx, `
		WITH at AS (
		    SELECT a FROM generate_series(timestamptz '2029-12-25 00:00:00+00', timestamptz '2031-12-31 00:00:00+00',
		                                  interval '7 hours 13 minutes 17.000001 seconds') AS a
		    UNION ALL
		    SELECT b + d FROM generate_series(timestamptz '2030-01-01 00:00:00+00', timestamptz '2031-03-01 00:00:00+00',
		                                      interval '1 day') AS b,
		                      unnest(ARRAY[interval '0', interval '-1 microsecond']) AS d),
		cases AS (
		    SELECT t, a, n, lethe.segment_leaf_hi(t, a) AS hi, (SELECT r.hi FROM lethe.leaf_range(t, a) r) AS want,
		           lethe.tier_keeps(t, a, n) AS keeps,
		           t = 'forever' OR (SELECT r.hi FROM lethe.leaf_range(t, a) r) > n - lethe.tier_window(t) AS want_keeps
		      FROM at, unnest(ARRAY['1w', '3w', '7w', 'forever', 'held']) AS t,
		           unnest(ARRAY[a + interval '7 days', a + interval '7 days 13 hours', a + interval '21 days', a + interval '25 days',
		                        a + interval '28 days', a + interval '49 days', a + interval '53 days', a + interval '56 days']) AS n)
		SELECT count(*), count(*) FILTER (WHERE hi IS DISTINCT FROM want),
		       count(*) FILTER (WHERE keeps IS DISTINCT FROM want_keeps)
		  FROM cases`).Scan(&checked, &wrongHi, &wrongKeeps)
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10_000 || wrongHi != 0 || wrongKeeps != 0 {
		t.Fatalf("of %d cases, %d leaf ends and %d tier_keeps answers differ from leaf_range's", checked, wrongHi, wrongKeeps)
	}
	var plan strings.Builder
	rows, err := e.pool.Query(e.ctx, `EXPLAIN (VERBOSE, COSTS OFF)
		SELECT lethe.settle_action('1w', '1w', a, 5, 3, now()) FROM generate_series(now() - interval '9 days', now(), interval '1 hour') AS a`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if p := plan.String(); strings.Contains(p, "settle_action") || strings.Contains(p, "tier_keeps") || strings.Contains(p, "leaf_range") {
		t.Fatalf("settle_action is not inlined down to expressions:\n%s", p)
	}
}
