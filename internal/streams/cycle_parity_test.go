package streams_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/auth"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/seal"
	"github.com/lethe-mq/lethe/internal/store"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// A cycle's pushes go through the engine's push rules: encryption at rest,
// shared leases of partitions=N pops, producerSub from the JWT.

const (
	cycleKey     = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	cycleSecret  = "cycle-output-card-4111-1111"
	cyclePublic  = "cycle-output-in-clear"
	cycleJWTHMAC = "streams-test-secret"
)

func withKey(t *testing.T) func(*config.Server) {
	t.Helper()
	keys, err := seal.ParseKeys(cycleKey, "")
	if err != nil {
		t.Fatal(err)
	}
	return func(c *config.Server) { c.EncryptionKeys = keys }
}

// storedFrames reads every frame of partition pid as stored.
func storedFrames(t *testing.T, b *bundle, pid string) []store.Frame {
	t.Helper()
	frames, err := store.Read(context.Background(), b.srv.Pool, uuid.MustParse(pid), 0, 100, 0, store.Everything())
	if err != nil {
		t.Fatal(err)
	}
	return frames
}

// segmentsDump is lethe.segments as text (bytea in hex).
func segmentsDump(t *testing.T, b *bundle) string {
	t.Helper()
	var dump string
	if err := b.srv.Pool.QueryRow(context.Background(),
		`SELECT coalesce(string_agg(s::text, E'\n'), '') FROM lethe.segments s`).Scan(&dump); err != nil {
		t.Fatal(err)
	}
	return dump
}

// A cycle pushing to an encrypted sink queue stores the payload sealed
// (no lethe.segments row holds it), and a pop opens it; a plain sink in
// the same cycle stays in clear.
func TestCyclePushToAnEncryptedSinkIsSealed(t *testing.T) {
	t.Parallel()
	b := setupWith(t, testserver.Options{Config: withKey(t)})
	b.must(t, http.StatusOK, http.MethodPost, "/api/v1/configure", `{"queue":"vault","options":{"encryptionEnabled":true}}`, nil)
	query := registered(t, b, "sealer")
	b.push(t, "src", "p1", "m1")
	in := b.pop(t, "src", "p1", "g", 10)
	secret, public := `{"card":"`+cycleSecret+`"}`, `{"note":"`+cyclePublic+`"}`
	var out api.StreamCycleResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/cycle", api.StreamCycleRequest{
		QueryID: query, PartitionID: in.Messages[0].PartitionID, ConsumerGroup: "g",
		PushItems: []api.PushItem{{Queue: "vault", Payload: json.RawMessage(secret)}, {Queue: "open", Payload: json.RawMessage(public)}},
		Ack:       &api.StreamAck{TransactionID: in.Messages[0].TransactionID, LeaseID: in.Messages[0].LeaseID},
	}, &out)
	if !out.Success || len(out.PushResults) != 2 {
		t.Fatalf("cycle answered %+v", out)
	}
	sealed := storedFrames(t, b, out.PushResults[0].PartitionID)
	if len(sealed) != 1 || !sealed[0].Sealed || bytes.Contains(sealed[0].Payload, []byte(cycleSecret)) {
		t.Fatalf("the encrypted sink stores %+v, want one sealed frame without the payload", sealed)
	}
	if plain := storedFrames(t, b, out.PushResults[1].PartitionID); len(plain) != 1 || plain[0].Sealed {
		t.Fatalf("the plain sink stores %+v, want one frame in clear", plain)
	}
	dump := segmentsDump(t, b)
	if strings.Contains(dump, hex.EncodeToString([]byte(cycleSecret))) {
		t.Error("lethe.segments holds the encrypted sink's payload in clear")
	}
	if !strings.Contains(dump, hex.EncodeToString([]byte(cyclePublic))) {
		t.Error("the scan does not find the plain sink's payload; it proves nothing")
	}
	if got := b.pop(t, "vault", "Default", "reader", 10); len(got.Messages) != 1 || string(got.Messages[0].Data) != secret {
		t.Fatalf("popped %+v from the encrypted sink, want %s", got.Messages, secret)
	}
}

// On a replica without QUEEN_ENCRYPTION_KEY a cycle pushing to an
// encrypted sink is refused whole (409): no state, no push, and the source
// lease stands for a replica with the key.
func TestCyclePushToAnEncryptedSinkWithoutAKeyWritesNothing(t *testing.T) {
	t.Parallel()
	keyed := setupWith(t, testserver.Options{Config: withKey(t)})
	bare := setupWith(t, testserver.Options{DatabaseURL: keyed.srv.DatabaseURL})
	keyed.must(t, http.StatusOK, http.MethodPost, "/api/v1/configure", `{"queue":"vault","options":{"encryptionEnabled":true}}`, nil)
	query := registered(t, keyed, "sealer")
	keyed.push(t, "src", "p1", "m1")
	in := keyed.pop(t, "src", "p1", "g", 10)
	m := in.Messages[0]
	cycle := api.StreamCycleRequest{
		QueryID: query, PartitionID: m.PartitionID, ConsumerGroup: "g",
		StateOps:  []api.StreamStateOp{{Type: "upsert", Key: "k", Value: json.RawMessage(`1`)}},
		PushItems: []api.PushItem{{Queue: "vault", Payload: json.RawMessage(`"secret"`)}},
		Ack:       &api.StreamAck{TransactionID: m.TransactionID, LeaseID: m.LeaseID},
	}
	var refusal api.Error
	bare.must(t, http.StatusConflict, http.MethodPost, "/streams/v1/cycle", cycle, &refusal)
	if !strings.Contains(refusal.Error, "QUEEN_ENCRYPTION_KEY") {
		t.Errorf("the refusal %q does not name QUEEN_ENCRYPTION_KEY", refusal.Error)
	}
	if got := stateOf(t, keyed, query, m.PartitionID); len(got) != 0 {
		t.Fatalf("the refused cycle wrote state %v", got)
	}
	var n int
	if err := keyed.srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM lethe.segments s
		JOIN lethe.partitions p ON p.id = s.partition_id JOIN lethe.queues q ON q.id = p.queue_id
		WHERE q.name = 'vault'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the refused cycle stored %d segments in the vault (err %v)", n, err)
	}
	var out api.StreamCycleResponse
	keyed.must(t, http.StatusOK, http.MethodPost, "/streams/v1/cycle", cycle, &out)
	if !out.Success {
		t.Fatalf("the same cycle on the replica with the key failed: %s", out.Error)
	}
}

// A pop with partitions=N leases every partition it claims under one lease
// id; a cycle settles that lease on its own partition only: the other
// partitions stay leased (an extend still finds them) until their own
// cycles ack them.
func TestCycleSettlesOnePartitionOfASharedLease(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	query := registered(t, b, "shared")
	b.push(t, "src", "p1", "a1", "a2")
	b.push(t, "src", "p2", "b1")
	var in popped
	b.must(t, http.StatusOK, http.MethodGet, "/api/v1/pop/queue/src?partitions=2&batch=10&consumerGroup=g", nil, &in)
	last := map[string]int{} // partition id -> index of its last message
	for i, m := range in.Messages {
		if m.LeaseID != in.Messages[0].LeaseID {
			t.Fatalf("messages leased under %s and %s, want one lease id", in.Messages[0].LeaseID, m.LeaseID)
		}
		last[m.PartitionID] = i
	}
	if len(in.Messages) != 3 || len(last) != 2 {
		t.Fatalf("popped %d messages of %d partitions, want 3 of 2", len(in.Messages), len(last))
	}
	leaseID := in.Messages[0].LeaseID
	cycle := func(i int) api.StreamCycleResponse {
		m := in.Messages[i]
		var out api.StreamCycleResponse
		b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/cycle", api.StreamCycleRequest{
			QueryID: query, PartitionID: m.PartitionID, ConsumerGroup: "g",
			StateOps: []api.StreamStateOp{{Type: "upsert", Key: "seen", Value: json.RawMessage(`1`)}},
			Ack:      &api.StreamAck{TransactionID: m.TransactionID, LeaseID: leaseID},
		}, &out)
		return out
	}
	extend := "/api/v1/lease/" + leaseID + "/extend"
	first, second := last[in.Messages[0].PartitionID], last[in.Messages[2].PartitionID]
	if out := cycle(first); !out.Success || out.AckResult == nil || !out.AckResult.LeaseReleased {
		t.Fatalf("the first partition's cycle answered %+v", out)
	}
	if out := cycle(first); out.Success {
		t.Fatal("a repeated cycle on the settled partition succeeded; its lease part is released")
	}
	b.must(t, http.StatusOK, http.MethodPost, extend, `{"seconds":60}`, nil)
	if out := cycle(second); !out.Success {
		t.Fatalf("the second partition's cycle under the shared lease failed: %s", out.Error)
	}
	b.must(t, http.StatusNotFound, http.MethodPost, extend, `{"seconds":60}`, nil)
	b.clk.Advance(10 * time.Minute) // past any lease: nothing is delivered again
	var again popped
	if status := b.call(t, http.MethodGet, "/api/v1/pop/queue/src?partitions=2&batch=10&consumerGroup=g", nil, &again); status != http.StatusNoContent {
		t.Fatalf("after both cycles a pop answered %d with %+v, want 204", status, again.Messages)
	}
}

// With JWTs on, a cycle's pushes carry the token's sub as producerSub, as
// a push does; the body cannot name another.
func TestCyclePushStampsTheJWTSubject(t *testing.T) {
	t.Parallel()
	b := setupWith(t, testserver.Options{Config: func(c *config.Server) {
		c.JWT = &auth.JWTConfig{Algorithm: auth.AlgHS256, Secret: cycleJWTHMAC, ClockSkew: 30 * time.Second,
			RolesClaim: "role", RolesArrayClaim: "roles", RoleAdmin: "admin", RoleReadWrite: "read-write", RoleReadOnly: "read-only"}
	}})
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "role": "read-write",
		"iat": t0.Unix(), "exp": t0.Add(time.Hour).Unix()}).SignedString([]byte(cycleJWTHMAC))
	if err != nil {
		t.Fatal(err)
	}
	b.token = tok
	query := registered(t, b, "stamped")
	b.push(t, "src", "p1", "m1")
	in := b.pop(t, "src", "p1", "g", 10)
	var out api.StreamCycleResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/cycle", `{"query_id":"`+query+`","partition_id":"`+in.Messages[0].PartitionID+
		`","consumer_group":"g","push_items":[{"queue":"sink","payload":1,"producerSub":"mallory"}],`+
		`"ack":{"transactionId":"`+in.Messages[0].TransactionID+`"}}`, &out)
	if !out.Success {
		t.Fatalf("cycle failed: %s", out.Error)
	}
	var sink api.PopResponse
	b.must(t, http.StatusOK, http.MethodGet, "/api/v1/pop/queue/sink", nil, &sink)
	if len(sink.Messages) != 1 || sink.Messages[0].ProducerSub != "alice" {
		t.Fatalf("the cycle's output popped as %+v, want producerSub alice", sink.Messages)
	}
	b.token = ""
	if status := b.call(t, http.MethodPost, "/streams/v1/cycle", `{}`, nil); status != http.StatusUnauthorized {
		t.Errorf("a cycle without a token answered %d, want 401", status)
	}
}

// A cycle's pushes count against a sink queue's maxSize like a push's: a
// cycle that would overfill it is refused whole (409) and writes nothing.
func TestCyclePushHoldsTheSinkMaxSize(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	b.must(t, http.StatusOK, http.MethodPost, "/api/v1/configure", `{"queue":"small","options":{"maxSize":1}}`, nil)
	query := registered(t, b, "bounded")
	b.push(t, "src", "p1", "m1")
	in := b.pop(t, "src", "p1", "g", 10)
	m := in.Messages[0]
	cycle := func(outputs int) api.StreamCycleRequest {
		c := api.StreamCycleRequest{QueryID: query, PartitionID: m.PartitionID, ConsumerGroup: "g",
			StateOps: []api.StreamStateOp{{Type: "upsert", Key: "k", Value: json.RawMessage(`1`)}},
			Ack:      &api.StreamAck{TransactionID: m.TransactionID, LeaseID: m.LeaseID}}
		for range outputs {
			c.PushItems = append(c.PushItems, api.PushItem{Queue: "small", Payload: json.RawMessage(`1`)})
		}
		return c
	}
	var refusal api.Error
	b.must(t, http.StatusConflict, http.MethodPost, "/streams/v1/cycle", cycle(2), &refusal)
	if !strings.Contains(refusal.Error, "maxSize") {
		t.Errorf("the refusal %q does not name maxSize", refusal.Error)
	}
	if got := stateOf(t, b, query, m.PartitionID); len(got) != 0 {
		t.Fatalf("the refused cycle wrote state %v", got)
	}
	var out api.StreamCycleResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/cycle", cycle(1), &out)
	if !out.Success || len(out.PushResults) != 1 {
		t.Fatalf("a cycle within maxSize answered %+v", out)
	}
}
