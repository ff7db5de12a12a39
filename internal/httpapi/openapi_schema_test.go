package httpapi_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// schemaChecker validates JSON values against the subset of JSON Schema
// that openapi.json uses: $ref, type, properties, required,
// additionalProperties, items, enum, anyOf and format date-time. A keyword
// outside that subset is an error, so the description cannot say more
// than the tests check.
type schemaChecker struct {
	schemas map[string]map[string]any // components.schemas
}

var knownKeywords = map[string]bool{"$ref": true, "type": true, "properties": true, "required": true,
	"additionalProperties": true, "items": true, "enum": true, "anyOf": true, "format": true, "description": true}

// check returns every way v differs from schema, each with its JSON path.
func (c *schemaChecker) check(path string, schema map[string]any, v any) []string {
	for k := range schema {
		if !knownKeywords[k] {
			return []string{fmt.Sprintf("%s: schema keyword %q is not supported by the test's checker", path, k)}
		}
	}
	if r, ok := schema["$ref"].(string); ok {
		name := strings.TrimPrefix(r, "#/components/schemas/")
		target, ok := c.schemas[name]
		if !ok {
			return []string{fmt.Sprintf("%s: $ref %s names no schema", path, r)}
		}
		return c.check(path, target, v)
	}
	if alts, ok := schema["anyOf"].([]any); ok {
		var all []string
		for i, alt := range alts {
			errs := c.check(path, alt.(map[string]any), v)
			if len(errs) == 0 {
				return nil
			}
			all = append(all, fmt.Sprintf("[anyOf %d] %s", i, strings.Join(errs, "; ")))
		}
		return all
	}
	if errs := checkType(path, schema, v); errs != nil {
		return errs
	}
	if enum, ok := schema["enum"].([]any); ok && !slices.Contains(enum, v) {
		return []string{fmt.Sprintf("%s: %v is not one of %v", path, v, enum)}
	}
	switch x := v.(type) {
	case map[string]any:
		return c.checkObject(path, schema, x)
	case []any:
		items, ok := schema["items"].(map[string]any)
		if !ok {
			return nil
		}
		var errs []string
		for i, e := range x {
			errs = append(errs, c.check(fmt.Sprintf("%s[%d]", path, i), items, e)...)
		}
		return errs
	case string:
		if schema["format"] == "date-time" {
			if _, err := time.Parse(time.RFC3339Nano, x); err != nil {
				return []string{fmt.Sprintf("%s: %q is not an RFC 3339 date-time", path, x)}
			}
		}
	}
	return nil
}

func (c *schemaChecker) checkObject(path string, schema, x map[string]any) []string {
	var errs []string
	props, _ := schema["properties"].(map[string]any)
	required, _ := schema["required"].([]any)
	for _, r := range required {
		if _, ok := x[r.(string)]; !ok {
			errs = append(errs, fmt.Sprintf("%s: required field %q is missing", path, r))
		}
	}
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if p, ok := props[k].(map[string]any); ok {
			errs = append(errs, c.check(path+"."+k, p, x[k])...)
			continue
		}
		switch extra := schema["additionalProperties"].(type) {
		case bool:
			if !extra {
				errs = append(errs, fmt.Sprintf("%s: field %q is not in the description", path, k))
			}
		case map[string]any:
			errs = append(errs, c.check(path+"."+k, extra, x[k])...)
		}
	}
	return errs
}

// checkType checks schema's type (a name or a list of names) against v.
func checkType(path string, schema map[string]any, v any) []string {
	var types []string
	switch t := schema["type"].(type) {
	case nil:
		return nil // any value
	case string:
		types = []string{t}
	case []any:
		for _, n := range t {
			types = append(types, n.(string))
		}
	}
	got := jsonType(v)
	for _, t := range types {
		if t == got || (t == "number" && got == "integer") {
			return nil
		}
	}
	return []string{fmt.Sprintf("%s: %s %s, want %s", path, got, clipJSON(v), strings.Join(types, " or "))}
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func clipJSON(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}
