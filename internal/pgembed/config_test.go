package pgembed

import (
	"testing"
)

func TestServerSettingsRejectsPort(t *testing.T) {
	if _, err := serverSettings(Config{Settings: map[string]string{"port": "5432"}}, "/s"); err == nil {
		t.Fatal("port in Settings accepted")
	}
	if _, err := serverSettings(Config{Settings: map[string]string{"a b": "1"}}, "/s"); err == nil {
		t.Fatal("bad setting name accepted")
	}
}

func TestPostgresOptionsQuotesForShell(t *testing.T) {
	got := postgresOptions(5433, map[string]string{"b": "it's", "a": "x y"})
	want := `-p 5433 -c 'a=x y' -c 'b=it'\''s'`
	if got != want {
		t.Fatalf("postgresOptions = %s\nwant %s", got, want)
	}
}

func TestConnQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/x":  "/tmp/x",
		"/a b":    "'/a b'",
		`it's`:    `'it\'s'`,
		"":        "''",
		`back\sl`: `'back\\sl'`,
	} {
		if got := connQuote(in); got != want {
			t.Errorf("connQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
