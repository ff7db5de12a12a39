package tier

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Tier{"1w": OneWeek, "7d": OneWeek, "3W": ThreeWeeks, "21d": ThreeWeeks,
		"7w": SevenWeeks, " 49d ": SevenWeeks, //nolint:gocritic // mapKey: the spaces are the input under test
		"forever": Forever, "Forever": Forever} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "5d", "2w", "14d", "held", "never", "1 w"} {
		_, err := Parse(bad)
		if err == nil || !strings.Contains(err.Error(), Allowed) {
			t.Errorf("Parse(%q) = %v; want an error naming %s", bad, err, Allowed)
		}
	}
}

func TestShorterAndBounds(t *testing.T) {
	t.Parallel()
	if !OneWeek.Shorter(ThreeWeeks) || !SevenWeeks.Shorter(Forever) || Forever.Shorter(SevenWeeks) || OneWeek.Shorter(OneWeek) {
		t.Error("tiers must order 1w < 3w < 7w < forever")
	}
	for _, c := range []struct {
		t        Tier
		min, max time.Duration
	}{
		{OneWeek, 7 * Day, 8*Day + time.Hour},
		{ThreeWeeks, 21 * Day, 28*Day + time.Hour},
		{SevenWeeks, 49 * Day, 56*Day + time.Hour},
	} {
		if b := c.t.LifeBounds(time.Hour); b.Min != c.min || b.Max != c.max || b.Forever {
			t.Errorf("%s bounds = %+v, want %v to %v", c.t, b, c.min, c.max)
		}
	}
	if !Forever.LifeBounds(time.Hour).Forever {
		t.Error("forever states no bound")
	}
}

func TestLeafRanges(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC) // a Wednesday
	for _, c := range []struct {
		t          Tier
		start, end time.Time
	}{
		{OneWeek, time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC), time.Date(2030, 1, 3, 0, 0, 0, 0, time.UTC)},
		{ThreeWeeks, time.Date(2029, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2030, 1, 7, 0, 0, 0, 0, time.UTC)},
		{SevenWeeks, time.Date(2029, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2030, 1, 7, 0, 0, 0, 0, time.UTC)},
		{Forever, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, 2, 1, 0, 0, 0, 0, time.UTC)},
		{Held, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, 2, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if s, e := LeafStart(c.t, at), LeafEnd(c.t, at); !s.Equal(c.start) || !e.Equal(c.end) {
			t.Errorf("%s leaf of %s = %s..%s, want %s..%s", c.t, at, s, e, c.start, c.end)
		}
	}
	sunday := time.Date(2030, 1, 6, 23, 0, 0, 0, time.UTC)
	if s := LeafStart(SevenWeeks, sunday); !s.Equal(time.Date(2029, 12, 31, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("a Sunday belongs to the week from the Monday before, got %s", s)
	}
}

func TestParseQuarantined(t *testing.T) {
	t.Parallel()
	if q, err := ParseQuarantined("PURGE"); err != nil || q != Purge {
		t.Errorf("ParseQuarantined(PURGE) = %q, %v", q, err)
	}
	if _, err := ParseQuarantined("drop"); err == nil || !strings.Contains(err.Error(), "keep or purge") {
		t.Errorf("ParseQuarantined(drop) = %v", err)
	}
}

// A queue changing to a tier settles its segments from every other queue
// tier, never from the held area.
func TestOutsideIsEveryOtherQueueTier(t *testing.T) {
	t.Parallel()
	for _, to := range Queue {
		out := Outside(string(to))
		if len(out) != len(Queue)-1 {
			t.Fatalf("Outside(%s) = %v, want the %d other queue tiers", to, out, len(Queue)-1)
		}
		for _, o := range out {
			if o == string(to) || o == string(Held) {
				t.Fatalf("Outside(%s) = %v names %s", to, out, o)
			}
		}
	}
}
