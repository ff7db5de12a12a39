package inspect

import (
	"testing"
	"time"
)

// A series stays a few hundred points long at most: the bucket widens
// with the span asked for.
func TestRetentionAnalyticsBucketWidens(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		span time.Duration
		want int
	}{
		{time.Hour, 1}, {2 * time.Hour, 1}, {3 * time.Hour, 5}, {24 * time.Hour, 15},
		{7 * 24 * time.Hour, 60}, {30 * 24 * time.Hour, 24 * 60},
	} {
		if got := bucketMinutes(c.span); got != c.want {
			t.Errorf("bucketMinutes(%s) = %d, want %d", c.span, got, c.want)
		}
		if points := int(c.span / (time.Duration(bucketMinutes(c.span)) * time.Minute)); points > 400 {
			t.Errorf("a span of %s makes %d points", c.span, points)
		}
	}
}
