package pushdec

import "testing"

func TestSeedsMatchStdlib(t *testing.T) {
	t.Parallel()
	for _, s := range fuzzSeeds {
		requireSameAsStdlib(t, []byte(s))
	}
}
