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

func TestServerSettingsAreAQueues(t *testing.T) {
	kept, err := serverSettings(Config{}, "/s")
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"max_wal_size": "256MB", "min_wal_size": "64MB", "checkpoint_timeout": "5min",
		"wal_compression": "on", "autovacuum_naptime": "15s"} {
		if kept[k] != want {
			t.Errorf("%s = %q, want %q", k, kept[k], want)
		}
	}
	throwaway, err := serverSettings(Config{Throwaway: true, Settings: map[string]string{"max_wal_size": "1GB"}}, "/s")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := throwaway["autovacuum_naptime"]; ok {
		t.Error("a throwaway cluster got the kept clusters' autovacuum_naptime")
	}
	if throwaway["max_wal_size"] != "1GB" || throwaway["wal_compression"] != "on" {
		t.Errorf("Settings must win over the queue settings and leave the others: %v", throwaway)
	}
}
