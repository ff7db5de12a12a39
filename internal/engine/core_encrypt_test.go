package engine_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/inspect"
	"github.com/lethe-mq/lethe/internal/queueopts"
	"github.com/lethe-mq/lethe/internal/seal"
)

const (
	encKeyA = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	encKeyB = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
)

func encKeys(t *testing.T, current, previous string) *seal.Keys {
	t.Helper()
	ks, err := seal.ParseKeys(current, previous)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// secretMarker is in every payload pushed to an encrypted queue, so a scan
// of the database can look for it.
const secretMarker = "card-4111-1111-1111-1111"

// requireNotInDatabase reads every row of every lethe table as text (bytea
// columns in hex, segments' frames decompressed) and fails if marker shows,
// in clear or in hex.
func (e *coreEnv) requireNotInDatabase(marker string) {
	e.t.Helper()
	rows, err := e.pool.Query(e.ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'lethe' ORDER BY 1`)
	if err != nil {
		e.t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			e.t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if len(tables) < 8 {
		e.t.Fatalf("found only tables %v", tables)
	}
	needles := []string{marker, hex.EncodeToString([]byte(marker))}
	for _, table := range tables {
		var dump string
		err := e.pool.QueryRow(e.ctx, fmt.Sprintf(`SELECT coalesce(string_agg(t::text, E'\n'), '') FROM lethe.%q t`, table)).Scan(&dump)
		if err != nil {
			e.t.Fatalf("read lethe.%s: %v", table, err)
		}
		for _, n := range needles {
			if strings.Contains(strings.ToLower(dump), strings.ToLower(n)) {
				e.t.Errorf("lethe.%s holds %q: the payload is stored readable", table, n)
			}
		}
	}
}

func TestCoreEncryptedQueueStoresNoPayloadInClear(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{Keys: encKeys(t, encKeyA, "")})
	e.configure("vault", `{"encryptionEnabled": true, "retryLimit": 0}`)
	e.configure("plain", `{}`)
	payload := func(i int) string { return fmt.Sprintf(`{"secret":%q,"n":%d}`, secretMarker, i) }
	e.push("vault", "p", payload(1), payload(2), payload(3))
	e.push("plain", "p", `{"public":"visible-marker"}`)
	// Pop: clear JSON again. The first message fails and is dead-lettered.
	resp := e.popN(engine.PopRequest{Queue: "vault", Group: "g", Batch: 10}, 3)
	for i, m := range resp.Messages {
		if string(m.Data) != payload(i+1) {
			t.Errorf("popped %s, want %s", m.Data, payload(i+1))
		}
	}
	e.ackMsg(resp.Messages[0], api.AckFailed)
	e.ackMsg(resp.Messages[1], api.AckCompleted)
	e.ackMsg(resp.Messages[2], api.AckCompleted)
	// Browse and the dead letter list open it too.
	got, err := readerOf(e.eng).GetMessage(e.ctx, resp.Messages[1].PartitionID, resp.Messages[1].TransactionID)
	if err != nil || string(got.Payload) != payload(2) || got.PayloadBytes != len(payload(2)) {
		t.Errorf("GetMessage = %+v, %v", got, err)
	}
	dead, _, err := deadLetterPage(readerOf(e.eng).DeadLetters(e.ctx, inspect.DeadLetterFilter{Queue: "vault"}))
	if err != nil || len(dead) != 1 || string(dead[0].Data) != payload(1) || dead[0].DataError != "" {
		t.Fatalf("dead letters = %+v, %v", dead, err)
	}
	if n := e.count(`SELECT count(*) FROM lethe.dead_letters WHERE payload IS NULL AND payload_sealed IS NOT NULL`); n != 1 {
		t.Errorf("%d dead letters kept sealed, want 1", n)
	}
	e.requireNotInDatabase(secretMarker)
	// Replay seals again; the replayed message pops in clear.
	id, _ := engine.ParseDeadLetterID(dead[0].ID)
	if _, err := e.eng.ReplayDeadLetter(e.ctx, id); err != nil {
		t.Fatal(err)
	}
	again := e.popN(engine.PopRequest{Queue: "vault", Group: "g2", Batch: 10}, 4)
	if string(again.Messages[3].Data) != payload(1) {
		t.Errorf("replayed message popped as %s", again.Messages[3].Data)
	}
	e.requireNotInDatabase(secretMarker)
	// The scan finds what is stored in clear: it can fail.
	var dump string
	_ = e.pool.QueryRow(e.ctx, `SELECT string_agg(t::text, '') FROM lethe.segments t`).Scan(&dump)
	if !strings.Contains(dump, hex.EncodeToString([]byte("visible-marker"))) {
		t.Error("the scan does not find a clear payload of the plain queue; it proves nothing")
	}
}

func TestCoreEncryptionWithoutAKeyRefuses(t *testing.T) {
	t.Parallel()
	keyed := newCoreEnv(t, engine.Config{Keys: encKeys(t, encKeyA, "")})
	keyed.configure("vault", `{"encryptionEnabled": true}`)
	keyed.push("vault", "", `"x"`)
	bare := engine.New(keyed.pool, engine.Config{Clock: keyed.clock})
	t.Cleanup(bare.Close)
	before := keyed.rowCounts()
	_, err := bare.Push(keyed.ctx, []api.PushItem{{Queue: "vault", Payload: json.RawMessage(`"y"`)}}, "")
	if !errors.Is(err, engine.ErrConflict) || !strings.Contains(err.Error(), "QUEEN_ENCRYPTION_KEY") {
		t.Errorf("push without a key: %v, want a conflict naming QUEEN_ENCRYPTION_KEY", err)
	}
	_, err = bare.Transaction(keyed.ctx, api.TransactionRequest{Operations: []api.Operation{
		{Type: "push", Items: []api.PushItem{{Queue: "vault", Payload: json.RawMessage(`1`)}}}}}, "")
	if !errors.Is(err, engine.ErrConflict) {
		t.Errorf("transaction push without a key: %v, want a conflict", err)
	}
	if _, err := bare.Pop(keyed.ctx, engine.PopRequest{Queue: "vault"}); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("pop without a key: %v, want a conflict", err)
	}
	_, err = queueopts.New(bare).Configure(keyed.ctx, api.ConfigureRequest{Queue: "new-vault", Options: json.RawMessage(`{"encryptionEnabled":true}`)})
	if !errors.Is(err, engine.ErrConflict) || !strings.Contains(err.Error(), "QUEEN_ENCRYPTION_KEY") {
		t.Errorf("configure encryption without a key: %v, want a conflict naming the key", err)
	}
	coreSameCounts(t, before, keyed.rowCounts())
}

// Rotation: a server with the new key and the old one as previous opens
// both; one without the old key dead-letters what it sealed as unreadable,
// still sealed, and a server with the key replays it.
func TestCoreEncryptionKeyRotation(t *testing.T) {
	t.Parallel()
	old := newCoreEnv(t, engine.Config{Keys: encKeys(t, encKeyA, "")})
	old.configure("vault", `{"encryptionEnabled": true}`)
	old.push("vault", "", `"sealed-by-a"`)
	rotated := engine.New(old.pool, engine.Config{Clock: old.clock, Keys: encKeys(t, encKeyB, encKeyA)})
	t.Cleanup(rotated.Close)
	if _, err := rotated.Push(old.ctx, []api.PushItem{{Queue: "vault", Payload: json.RawMessage(`"sealed-by-b"`)}}, ""); err != nil {
		t.Fatal(err)
	}
	resp, err := rotated.Pop(old.ctx, engine.PopRequest{Queue: "vault", Group: "g", Batch: 10, AutoAck: true})
	if err != nil || len(resp.Messages) != 2 || string(resp.Messages[0].Data) != `"sealed-by-a"` || string(resp.Messages[1].Data) != `"sealed-by-b"` {
		t.Fatalf("rotated server popped %v, %v", corePayloads(resp), err)
	}
	newOnly := engine.New(old.pool, engine.Config{Clock: old.clock, Keys: encKeys(t, encKeyB, "")})
	t.Cleanup(newOnly.Close)
	resp, err = newOnly.Pop(old.ctx, engine.PopRequest{Queue: "vault", Group: "h", Batch: 10, AutoAck: true})
	if err != nil || len(resp.Messages) != 1 || string(resp.Messages[0].Data) != `"sealed-by-b"` {
		t.Fatalf("server without the old key popped %v, %v; want only the new message", corePayloads(resp), err)
	}
	dead, _, _ := deadLetterPage(readerOf(newOnly).DeadLetters(old.ctx, inspect.DeadLetterFilter{Queue: "vault", Group: "h"}))
	if len(dead) != 1 || !strings.Contains(dead[0].ErrorMessage, "unreadable") || dead[0].Data != nil || dead[0].DataError == "" {
		t.Fatalf("dead letters without the old key = %+v", dead)
	}
	listed, _, _ := deadLetterPage(readerOf(rotated).DeadLetters(old.ctx, inspect.DeadLetterFilter{Queue: "vault", Group: "h"}))
	if len(listed) != 1 || !bytes.Equal(listed[0].Data, []byte(`"sealed-by-a"`)) {
		t.Fatalf("a server with the old key lists %+v", listed)
	}
	id, _ := engine.ParseDeadLetterID(dead[0].ID)
	if _, err := newOnly.ReplayDeadLetter(old.ctx, id); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("replay without the key: %v, want a conflict", err)
	}
	if _, err := rotated.ReplayDeadLetter(old.ctx, id); err != nil {
		t.Errorf("replay with the key: %v", err)
	}
	resp, _ = newOnly.Pop(old.ctx, engine.PopRequest{Queue: "vault", Group: "h", Batch: 10})
	if len(resp.Messages) != 1 || string(resp.Messages[0].Data) != `"sealed-by-a"` {
		t.Errorf("after the replay (sealed again under the new key) %v", corePayloads(resp))
	}
}
