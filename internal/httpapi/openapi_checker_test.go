package httpapi_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The schema checker itself: each rule it enforces fails a value that
// breaks it, and a keyword it does not know is an error, not ignored.
func TestSchemaCheckerRules(t *testing.T) {
	t.Parallel()
	c := &schemaChecker{schemas: map[string]map[string]any{
		"Item": {"type": "object", "additionalProperties": false, "required": []any{"n"},
			"properties": map[string]any{"n": map[string]any{"type": "integer"}, "at": map[string]any{"type": []any{"string", "null"}, "format": "date-time"},
				"s": map[string]any{"type": "string", "enum": []any{"a", "b"}}}},
	}}
	schema := map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{
		map[string]any{"$ref": "#/components/schemas/Item"}, map[string]any{"type": "boolean"}}}}
	for _, tc := range []struct {
		value, wantErr string
	}{
		{`[{"n":1,"at":null,"s":"a"},true,{"n":2,"at":"2030-01-02T03:04:05.5Z"}]`, ""},
		{`[{"n":1.5}]`, "want integer"},
		{`[{}]`, `required field "n" is missing`},
		{`[{"n":1,"extra":0}]`, `field "extra" is not in the description`},
		{`[{"n":1,"at":"yesterday"}]`, "not an RFC 3339 date-time"},
		{`[{"n":1,"s":"c"}]`, "is not one of"},
		{`["x"]`, "want boolean"},
	} {
		var v any
		dec := json.NewDecoder(bytes.NewReader([]byte(tc.value)))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		errs := strings.Join(c.check("$", schema, v), "\n")
		if tc.wantErr == "" && errs != "" || !strings.Contains(errs, tc.wantErr) {
			t.Errorf("%s: errors %q, want %q", tc.value, errs, tc.wantErr)
		}
	}
	if errs := c.check("$", map[string]any{"minimum": 1}, json.Number("0")); len(errs) == 0 {
		t.Error("a schema keyword the checker does not know was ignored")
	}
}
