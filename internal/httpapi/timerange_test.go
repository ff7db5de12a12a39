package httpapi

import (
	"net/url"
	"testing"
	"time"
)

func TestTimeRange(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	day := func(d int) time.Time { return time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		query    string
		from, to time.Time
		bad      bool
	}{
		{"from=2024-01-31&to=2024-01-31", day(31), day(32).Add(-time.Nanosecond), false},
		{"from=2024-01-01T10:00:00Z&to=2024-01-02", day(1).Add(10 * time.Hour), day(3).Add(-time.Nanosecond), false},
		{"from=2024-01-01T10:00:00+02:00&to=2024-01-02", day(1).Add(8 * time.Hour), day(3).Add(-time.Nanosecond), false},
		{"to=2030-05-06T07:08:09Z", now.Add(-24 * time.Hour), now, false},
		{"", now.Add(-24 * time.Hour), now, false},
		{"from=2024-01-02&to=2024-01-01", time.Time{}, time.Time{}, true},
		{"from=yesterday", time.Time{}, time.Time{}, true},
		{"from=2020-01-01&to=2024-01-01", time.Time{}, time.Time{}, true},
	} {
		q, _ := url.ParseQuery(c.query)
		from, to, err := window(q, now, 24*time.Hour, 400*24*time.Hour)
		if (err != nil) != c.bad {
			t.Errorf("window(%s) error %v, want bad=%v", c.query, err, c.bad)
			continue
		}
		if !c.bad && (!from.Equal(c.from) || !to.Equal(c.to)) {
			t.Errorf("window(%s) = %s..%s, want %s..%s", c.query, from, to, c.from, c.to)
		}
	}
	q, _ := url.ParseQuery("from=2024-01-31&to=2024-01-31")
	from, to, err := optionalRange(q)
	if err != nil || !from.Equal(day(31)) || !to.Equal(day(32).Add(-time.Nanosecond)) {
		t.Errorf("optionalRange reads dates as window does not: %v %v %v", from, to, err)
	}
}
