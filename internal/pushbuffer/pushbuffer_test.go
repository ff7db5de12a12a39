package pushbuffer_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestPushMaintenanceBuffersAndReplaysExactlyOnce(t *testing.T) {
	t.Parallel()
	dirA, dirB := t.TempDir(), t.TempDir()
	a := start(t, dirA, "")

	setPush(t, a.URL, true)
	res := push(t, a.URL,
		api.PushItem{Queue: "mq", Payload: json.RawMessage(`{"n":1}`), TransactionID: "given-1"},
		api.PushItem{Queue: "mq", Payload: json.RawMessage(`{"n":2}`)},
		api.PushItem{Queue: "mq", Partition: "Default", Payload: json.RawMessage(`"three"`)})
	var want []string
	for i, r := range res {
		if r.Status != api.StatusBuffered || r.TransactionID == "" || r.TransactionIDCamel != r.TransactionID || r.QueueName != "mq" {
			t.Fatalf("push result %d = %+v, want buffered with a transaction id", i, r)
		}
		want = append(want, r.TransactionID)
	}
	if want[0] != "given-1" {
		t.Fatalf("the given transaction id became %q", want[0])
	}
	if st := pushStatus(t, a.URL); !st.Enabled || st.BufferedMessages != 3 || !st.BufferHealthy {
		t.Fatalf("GET maintenance = %+v, want enabled with 3 buffered", st)
	}
	if msgs := popAll(t, a.URL, "mq", ""); len(msgs) != 0 {
		t.Fatalf("pop during push maintenance found %d messages; they should be in the buffer", len(msgs))
	}

	// A copy of the buffer as it was before the replay stands for a crash
	// after the messages were stored but before the file was removed.
	pending := filepath.Join(dirA, "buffer", "pending.jsonl")
	raw, err := os.ReadFile(pending)
	if err != nil {
		t.Fatalf("the buffer file: %v", err)
	}
	if n := strings.Count(string(raw), "\n"); n != 3 {
		t.Fatalf("buffer holds %d lines, want 3", n)
	}
	if err := os.MkdirAll(filepath.Join(dirB, "buffer"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirB, "buffer", "pending.jsonl"), raw, 0o600); err != nil {
		t.Fatal(err)
	}

	setPush(t, a.URL, false)
	eventually(t, "replica A has replayed its buffer", func() bool { return pushStatus(t, a.URL).BufferedMessages == 0 })
	if got := txnIDs(popAll(t, a.URL, "mq", "")); !slices.Equal(got, want) {
		t.Fatalf("after the replay pop gave %v, want %v in push order", got, want)
	}
	for _, name := range []string{"pending.jsonl", "replaying.jsonl"} {
		if _, err := os.Stat(filepath.Join(dirA, "buffer", name)); err == nil {
			t.Errorf("%s is still there after a successful replay", name)
		}
	}

	// The second replay, at B's start, finds every message already stored.
	b := start(t, dirB, a.DatabaseURL)
	eventually(t, "replica B has replayed the copy", func() bool { return pushStatus(t, b.URL).BufferedMessages == 0 })
	var stored int64
	if err := a.Pool.QueryRow(context.Background(), `
		SELECT sum(p.next_offset) FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
		 WHERE q.name = 'mq'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != 3 {
		t.Fatalf("queue mq stored %d messages after two replays, want 3", stored)
	}
	if got := txnIDs(popAll(t, b.URL, "mq", "audit")); !slices.Equal(got, want) {
		t.Fatalf("a new consumer group reads %v, want %v exactly once", got, want)
	}
}

func TestPopMaintenanceAnswersEmpty(t *testing.T) {
	t.Parallel()
	s := start(t, t.TempDir(), "")
	push(t, s.URL, api.PushItem{Queue: "pq", Payload: json.RawMessage(`1`)})

	var st api.PopMaintenance
	call(t, "POST", s.URL+"/api/v1/system/maintenance/pop", `{"enabled": true}`, http.StatusOK, &st)
	if !st.Enabled || !st.PopMaintenanceMode {
		t.Fatalf("POST pop maintenance answered %+v", st)
	}
	if status, body := do(t, "GET", s.URL+"/api/v1/pop/queue/pq", "", nil); status != http.StatusNoContent {
		t.Fatalf("pop during pop maintenance = %d %s, want 204", status, body)
	}
	call(t, "GET", s.URL+"/api/v1/system/maintenance/pop", nil, http.StatusOK, &st)
	if !st.Enabled {
		t.Fatalf("GET pop maintenance = %+v, want enabled", st)
	}
	call(t, "POST", s.URL+"/api/v1/system/maintenance/pop", `{"enabled": false}`, http.StatusOK, &st)
	if msgs := popAll(t, s.URL, "pq", ""); len(msgs) != 1 {
		t.Fatalf("pop after pop maintenance found %d messages, want 1", len(msgs))
	}
}

func TestBadMaintenanceBodiesAnswer400(t *testing.T) {
	t.Parallel()
	s := start(t, t.TempDir(), "")
	for _, path := range []string{"/api/v1/system/maintenance", "/api/v1/system/maintenance/pop"} {
		for _, body := range []string{``, `{`, `{}`, `{"enabled": "yes"}`, `[true]`, `{"enabled": true} {}`} {
			status, raw := do(t, "POST", s.URL+path, "", body)
			var e api.Error
			if status != http.StatusBadRequest || json.Unmarshal(raw, &e) != nil || !strings.Contains(e.Error, `"enabled"`) {
				t.Errorf("POST %s %q = %d %s, want 400 with an error naming \"enabled\"", path, body, status, raw)
			}
		}
	}
	if st := pushStatus(t, s.URL); st.Enabled {
		t.Fatalf("a bad body changed the state: %+v", st)
	}
}

func TestChangingMaintenanceNeedsTheOperatorToken(t *testing.T) {
	t.Parallel()
	s := start(t, t.TempDir(), "", func(c *config.Server) { c.AuthToken, c.OperatorToken = "user", "op" })
	url := s.URL + "/api/v1/system/maintenance"
	if status, raw := do(t, "POST", url, "user", `{"enabled": true}`); status != http.StatusForbidden {
		t.Fatalf("POST with the user token = %d %s, want 403", status, raw)
	}
	if status, raw := do(t, "GET", url, "user", nil); status != http.StatusOK || !strings.Contains(string(raw), `"enabled":false`) {
		t.Fatalf("GET with the user token = %d %s, want 200 and still off", status, raw)
	}
	if status, raw := do(t, "POST", url, "op", `{"enabled": true}`); status != http.StatusOK {
		t.Fatalf("POST with the operator token = %d %s, want 200", status, raw)
	}
}

func TestReplicasShareTheMaintenanceState(t *testing.T) {
	t.Parallel()
	a := start(t, t.TempDir(), "")
	b := start(t, t.TempDir(), a.DatabaseURL)

	setPush(t, a.URL, true)
	// B's own poll (not a GET, which would read the database) notices.
	eventually(t, "replica B sees push maintenance", func() bool {
		return gauge(t, b.URL, "lethe_maintenance_push_enabled") == 1
	})
	if st := pushStatus(t, b.URL); !st.Enabled {
		t.Fatalf("GET on B = %+v, want enabled", st)
	}
	res := push(t, b.URL, api.PushItem{Queue: "rq", Payload: json.RawMessage(`"via b"`)})
	if res[0].Status != api.StatusBuffered {
		t.Fatalf("push through B during maintenance = %+v, want buffered", res[0])
	}

	// Turned off through A, B notices and replays its own buffer.
	setPush(t, a.URL, false)
	eventually(t, "replica B replays its buffer", func() bool {
		return gauge(t, b.URL, "lethe_maintenance_buffered_messages") == 0
	})
	if got := txnIDs(popAll(t, a.URL, "rq", "")); !slices.Equal(got, []string{res[0].TransactionID}) {
		t.Fatalf("pop through A after the replay gave %v, want [%s]", got, res[0].TransactionID)
	}

	var st api.PopMaintenance
	call(t, "POST", b.URL+"/api/v1/system/maintenance/pop", `{"enabled": true}`, http.StatusOK, &st)
	call(t, "GET", a.URL+"/api/v1/system/maintenance/pop", nil, http.StatusOK, &st)
	if !st.Enabled {
		t.Fatalf("pop maintenance set through B, GET on A = %+v", st)
	}
}

func TestStartupReplaysLeftoversAndSetsBadLinesAside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	buf := filepath.Join(dir, "buffer")
	if err := os.MkdirAll(buf, 0o700); err != nil {
		t.Fatal(err)
	}
	lines := `{"queue":"lq","payload":1,"transactionId":"t1"}` + "\n" +
		`not json` + "\n" +
		`{"queue":"","payload":2,"transactionId":"t-bad"}` + "\n" +
		`{"queue":"lq","payload":3,"transactionId":"t3"}` + "\n" +
		`{"queue":"lq","payl` // torn by a crash mid-append: never acknowledged
	if err := os.WriteFile(filepath.Join(buf, "pending.jsonl"), []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, dir, "")
	eventually(t, "the leftover buffer is replayed", func() bool { return pushStatus(t, s.URL).BufferedMessages == 0 })
	if got := txnIDs(popAll(t, s.URL, "lq", "")); !slices.Equal(got, []string{"t1", "t3"}) {
		t.Fatalf("replayed messages %v, want [t1 t3]", got)
	}
	rejected, err := os.ReadFile(filepath.Join(buf, "rejected.jsonl"))
	if err != nil {
		t.Fatalf("rejected lines: %v", err)
	}
	if n := strings.Count(string(rejected), "\n"); n != 2 || !strings.Contains(string(rejected), "t-bad") {
		t.Fatalf("rejected.jsonl = %q, want the two bad lines", rejected)
	}
}
