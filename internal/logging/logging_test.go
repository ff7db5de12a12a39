package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestJSONCarriesFieldsAsKeys(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log, err := New(&buf, Options{Format: "json", Level: "debug"})
	if err != nil {
		t.Fatal(err)
	}
	log.Debug("retention swept", "segments_deleted", 3, "queue", "orders")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("LOG_FORMAT=json wrote %q, not one JSON object: %v", buf.String(), err)
	}
	if line["msg"] != "retention swept" || line["segments_deleted"] != 3.0 || line["queue"] != "orders" || line["level"] != "DEBUG" {
		t.Fatalf("JSON line %v lacks the message, level or fields", line)
	}
}

func TestTextIsTheDefaultAndLevelFilters(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log, err := New(&buf, Options{Level: "WARN"})
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	log.Warn("shown", "n", 1)
	if got := buf.String(); strings.Contains(got, "hidden") || !strings.Contains(got, "level=WARN msg=shown n=1") {
		t.Fatalf("text log at warn wrote %q", got)
	}
}

func TestBadValuesAreRefusedInOneLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		opts Options
		want string
	}{
		{Options{Format: "logfmt"}, `LOG_FORMAT must be text or json, got "logfmt"`},
		{Options{Level: "verbose"}, `LOG_LEVEL must be debug, info, warn or error, got "verbose"`},
	}
	for _, c := range cases {
		_, err := New(&bytes.Buffer{}, c.opts)
		if err == nil || err.Error() != c.want || strings.Contains(err.Error(), "\n") {
			t.Errorf("New(%+v) = %v, want %q", c.opts, err, c.want)
		}
	}
}
