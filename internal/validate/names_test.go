package validate

import (
	"errors"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/internal/apierr"
)

func TestProblem(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, v string
		want    string
	}{
		{"absent", "", ""},
		{"plain", "orders", ""},
		{"inner spaces", "my queue", ""},
		{"unicode", "café-注文-😀", ""},
		{"replacement char is a char", "a\uFFFDb", ""},
		{"at the limit", strings.Repeat("q", NameMaxBytes), ""},
		{"over the limit", strings.Repeat("q", NameMaxBytes+1), problemTooLong},
		{"NUL", "a\x00b", problemControl},
		{"tab", "a\tb", problemControl},
		{"newline", "a\n", problemControl},
		{"DEL", "a\x7f", problemControl},
		{"C1 NEL", "a\u0085b", problemControl},
		{"C1 CSI", "\u009b", problemControl},
		{"invalid UTF-8", "a\xffb", problemUTF8},
		{"truncated UTF-8", "caf\xc3", problemUTF8},
		{"surrogate encoded", "\xed\xa0\x80", problemUTF8},
		{"RLO", "abc\u202edcba", problemBidi},
		{"LRE", "\u202a", problemBidi},
		{"FSI isolate", "x\u2068y", problemBidi},
		{"PDI", "x\u2069", problemBidi},
		{"space only", " ", problemBlank},
		{"spaces", "   ", problemBlank},
		{"ideographic space", "\u3000", problemBlank},
		{"no-break space", "\u00a0\u00a0", problemBlank},
	} {
		if got := nameProblem(c.v, NameMaxBytes); got != c.want {
			t.Errorf("%s: nameProblem(%q) = %q, want %q", c.name, c.v, got, c.want)
		}
	}
}

func TestNameErrorsNameTheField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err   error
		field string
		text  string
	}{
		{Name("queue", ""), "queue", "queue is required"},
		{Name("consumerGroup", "a\x00"), "consumerGroup", "consumerGroup contains a control character"},
		{OptionalName("namespace", strings.Repeat("n", 600)), "namespace", "namespace is 600 bytes long; the limit is 512"},
		{ID("transactionId", "\u202e"), "transactionId", "transactionId contains a bidirectional override"},
		{RequiredID("transactionId", ""), "transactionId", "transactionId is required"},
	} {
		if c.err == nil {
			t.Errorf("%s: no error", c.field)
			continue
		}
		if !errors.Is(c.err, apierr.Invalid) || apierr.FieldOf(c.err) != c.field || !strings.Contains(c.err.Error(), c.text) {
			t.Errorf("error %q (field %q), want Invalid naming %q and saying %q", c.err, apierr.FieldOf(c.err), c.field, c.text)
		}
	}
	if err := OptionalName("namespace", ""); err != nil {
		t.Errorf("an absent optional name: %v", err)
	}
	if err := ID("traceId", "trace-1"); err != nil {
		t.Errorf("a good id: %v", err)
	}
}
