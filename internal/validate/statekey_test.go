package validate_test

import (
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/validate"
)

// State keys may hold control characters (the streams SDKs separate a key's
// parts with U+001F) but not NUL, bad UTF-8, nothing, or more than
// StateKeyMaxBytes.
func TestStateKey(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"k", "tumb\x1f2030-01-01T00:00\x1fcustomer 7", "__wm__", strings.Repeat("k", validate.StateKeyMaxBytes)} {
		if err := validate.StateKey("key", ok); err != nil {
			t.Errorf("StateKey(%q): %v, want accepted", ok, err)
		}
	}
	for _, bad := range []string{"", "a\x00b", "o\xffk", strings.Repeat("k", validate.StateKeyMaxBytes+1)} {
		err := validate.StateKey("state_ops[2].key", bad)
		if apierr.KindOf(err) != apierr.Invalid || apierr.FieldOf(err) != "state_ops[2].key" {
			t.Errorf("StateKey(%.20q): %v (field %q), want invalid naming the field", bad, err, apierr.FieldOf(err))
		}
	}
}
