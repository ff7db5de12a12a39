package pushdec

import (
	"encoding/json"
	"testing"

	"github.com/lethe-mq/lethe/internal/validate"
)

// storableJSON is Valid's contract, from two other scanners: valid JSON
// (encoding/json) that PostgreSQL can store (validate.Storable).
func storableJSON(b []byte) bool { return json.Valid(b) && validate.Storable(b) == nil }

// validSeeds are values on their own, where Valid must agree with
// storableJSON; the push and ack batch bodies of fuzzSeeds and ackFuzzSeeds
// are values too.
var validSeeds = []string{
	`1`, `-0`, `01`, `1.`, `1e`, `1e+2`, `"x"`, `"a\u00e9\"b"`, `"\x"`, `"` + "\x01" + `"`, `"unterminated`,
	`true`, `tru`, `nul`, `null `, ` null`, `null null`, `[1,]`, `[1 2]`, `{"a":1,}`, `{"a" 1}`, `{1:2}`,
	`[[[[[]]]]]`, `[`, `]`, `{}`, `{"a":{"b":[true,false,null,"s",1.5e-3]}}`, "\xff", `"` + "\xff" + `"`,
}

func TestValidIsStorableJSON(t *testing.T) {
	t.Parallel()
	for _, s := range append(append(append([]string{}, validSeeds...), fuzzSeeds...), ackFuzzSeeds...) {
		if got, want := Valid([]byte(s)), storableJSON([]byte(s)); got != want {
			t.Errorf("Valid(%q) = %v, want %v (valid JSON that PostgreSQL can store)", s, got, want)
		}
	}
}

func FuzzValidIsStorableJSON(f *testing.F) {
	for _, s := range append(append(append([]string{}, validSeeds...), fuzzSeeds...), ackFuzzSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), storableJSON(b); got != want {
			t.Fatalf("Valid(%q) = %v, want %v (valid JSON that PostgreSQL can store)", b, got, want)
		}
	})
}
