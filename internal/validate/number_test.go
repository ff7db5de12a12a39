package validate

import (
	"strings"
	"testing"
)

func TestNumberProblem(t *testing.T) {
	t.Parallel()
	ok := []string{"0", "-0", "1", "-12.5", "1e308", "-1.7976931348623157e308", "5e-324", "4e-324",
		"0.5", "0e-9999", "0e9999", "0.0e+0", "1E+2", "1e0001", strings.Repeat("9", 300),
		"0." + strings.Repeat("0", 320) + "1", "123456789012345678901234567890"}
	for _, n := range ok {
		if p := NumberProblem([]byte(n)); p != "" {
			t.Errorf("NumberProblem(%.40q) = %q, want none", n, p)
		}
	}
	bad := []string{"1e999999", "-1e400", "1.8e308", "1e-400", "2e-324", "0e-99999", "0e10000",
		"1e00010000", strings.Repeat("9", 310), "0." + strings.Repeat("1", 1000),
		"0." + strings.Repeat("0", 400) + "1"}
	for _, n := range bad {
		if p := NumberProblem([]byte(n)); p == "" {
			t.Errorf("NumberProblem(%.40q) found nothing, want a problem", n)
		}
	}
}
