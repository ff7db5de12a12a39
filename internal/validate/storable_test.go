package validate

import (
	"errors"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/internal/apierr"
)

// storableCases are well-formed JSON texts, and whether they can be stored.
var storableCases = []struct {
	json string
	ok   bool
}{
	{`{"a":"plain","b":[1,2.5,-3e10,true,null]}`, true},
	{`"\u00e9\u4e2d\ud83d\ude00"`, true},
	{`"\uD83D\uDE00"`, true},
	{`"\u0001 and \u001f are fine in jsonb"`, true},
	{`"é, 中, 😀 as UTF-8"`, true},
	{`{"k\"ey":"\\u0000 is an escaped backslash, not NUL"}`, true},
	{`"\u0000"`, false},
	{`{"a":{"b":["x","y\u0000z"]}}`, false},
	{`{"\u0000":1}`, false},
	{`"\ud800"`, false},
	{`"\udc00"`, false},
	{`"\ud800\u0041"`, false},
	{`"\ud800\ud800\udc00"`, false},
	{`"\udc00\ud800"`, false},
	{`"x\ud83d"`, false},
	{"\"caf\xc3\"", false},
	{"\"\xff\"", false},
	{"{\"\xfe\":1}", false},
	{"\"\xed\xa0\x80\"", false},
	{`1e999999`, false},
	{`[1, -1e400]`, false},
	{`{"n":1e-400}`, false},
	{`{"n":0e-99999}`, false},
	{`1e308`, true},
}

func TestStorable(t *testing.T) {
	t.Parallel()
	for _, c := range storableCases {
		err := Storable([]byte(c.json))
		if (err == nil) != c.ok {
			t.Errorf("Storable(%q) = %v, want ok=%v", c.json, err, c.ok)
		}
		if err != nil && !errors.Is(err, apierr.Invalid) {
			t.Errorf("Storable(%q) = %v, not Invalid", c.json, err)
		}
	}
}

func TestStorableNamesTheKey(t *testing.T) {
	t.Parallel()
	err := Storable([]byte(`{"queue":"q","transactionId":"a\u0000b"}`))
	if apierr.FieldOf(err) != "transactionId" || !strings.Contains(err.Error(), `\u0000`) {
		t.Fatalf("Storable = %v (field %q), want transactionId named", err, apierr.FieldOf(err))
	}
}

func TestPayload(t *testing.T) {
	t.Parallel()
	if err := Payload("items[0].payload", []byte(`{"a":`)); err == nil || apierr.FieldOf(err) != "items[0].payload" {
		t.Errorf("malformed payload: %v", err)
	}
	if err := Payload("items[0].payload", []byte(`"\ud800"`)); err == nil {
		t.Error("a lone surrogate passed")
	}
	if err := Payload("items[0].payload", []byte(`{"ok":[1,2,"three"]}`)); err != nil {
		t.Errorf("a good payload: %v", err)
	}
}

// Malformed input must not make the scanner panic.
func FuzzStorableNeverPanics(f *testing.F) {
	for _, c := range storableCases {
		f.Add([]byte(c.json))
	}
	f.Add([]byte(`"\u`))
	f.Add([]byte(`"\ud800\u`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _ = scanStorable(b)
	})
}
