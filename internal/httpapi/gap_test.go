package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// A pop tells a group what retention deleted before it consumed it, and
// why, once: the run of offsets, how many of them it had not completed,
// the rules of the history that deleted them. A group that subscribes
// after the deletion is told nothing: it was never owed those messages.
func TestPopTellsTheGroupWhatItLost(t *testing.T) {
	c := setupAdmin(t, nil)
	ctx := context.Background()
	c.configure("g", `{"retentionEnabled":true,"retentionSeconds":60}`)
	c.pushNumbered("g", "p", 4)                                   // offsets 0..3
	c.ack(c.pop("g", "p", "slow", 1)[0], "slow", "completed", "") // slow consumed offset 0
	c.clock.Advance(2 * time.Minute)
	c.sweep(4)
	deletedAt := c.clock.Now()
	c.clock.Advance(time.Minute)
	c.push("g", "p", "", map[string]int{"n": 4})

	resp := c.popResponse("/api/v1/pop/queue/g/partition/p?consumerGroup=slow&batch=10&wait=false", http.StatusOK)
	if got := adminPayloads(t, resp.Messages); !slices.Equal(got, []int{4}) {
		t.Fatalf("slow popped %v, want [4]", got)
	}
	if len(resp.Gaps) != 1 {
		t.Fatalf("gaps = %+v, want one", resp.Gaps)
	}
	g := resp.Gaps[0]
	if g.Queue != "g" || g.Partition != "p" || g.PartitionID != resp.PartitionID || g.FromOffset != 1 || g.ToOffset != 3 ||
		g.Messages != 3 || !slices.Equal(g.Rules, []string{"retention"}) || g.DeletedAt == nil || !g.DeletedAt.Equal(deletedAt) {
		t.Fatalf("gap = %+v, want offsets 1..3 of g/p, 3 messages, deleted by retention at %s", g, deletedAt)
	}
	if !strings.Contains(g.Reason, "retentionSeconds") || !strings.Contains(g.Reason, "offsets 1..3") {
		t.Fatalf("reason %q does not say what and why", g.Reason)
	}
	c.ack(resp.Messages[0], "slow", "completed", "")
	if _, raw := c.do("GET", "/metrics", nil); !strings.Contains(string(raw), `lethe_consumer_gap_messages_total{group="slow",queue="g"} 3`) {
		t.Fatalf("/metrics does not count slow's 3 lost messages:\n%s", raw)
	}

	// Told once: the group has moved past it.
	c.push("g", "p", "", map[string]int{"n": 5})
	again := c.popResponse("/api/v1/pop/queue/g/partition/p?consumerGroup=slow&batch=10&wait=false", http.StatusOK)
	if len(again.Gaps) != 0 || !slices.Equal(adminPayloads(t, again.Messages), []int{5}) {
		t.Fatalf("second pop = %v with gaps %+v, want [5] and no gap", adminPayloads(t, again.Messages), again.Gaps)
	}
	// A group that arrives after the deletion starts at what is stored.
	late := c.popResponse("/api/v1/pop/queue/g/partition/p?consumerGroup=late&batch=10&wait=false", http.StatusOK)
	if len(late.Gaps) != 0 || !slices.Equal(adminPayloads(t, late.Messages), []int{4, 5}) {
		t.Fatalf("late pop = %v with gaps %+v, want [4 5] and no gap", adminPayloads(t, late.Messages), late.Gaps)
	}

	// A long poll answers at once with a gap, even when the claim has no
	// message to give yet (the partition's window is still open).
	c.configure("w", `{"retentionEnabled":true,"retentionSeconds":60,"windowBuffer":30}`)
	c.push("w", "p", "", map[string]int{"n": 0})
	c.clock.Advance(time.Minute)
	c.pop("w", "p", "grp", 1) // leases offset 0, then lets the lease lapse
	c.clock.Advance(10 * time.Minute)
	if _, err := c.srv.Retention.RunCycle(ctx); err != nil {
		t.Fatal(err)
	}
	c.push("w", "p", "", map[string]int{"n": 1}) // the window (30 s after this push) holds it back
	held := c.popResponse("/api/v1/pop/queue/w/partition/p?consumerGroup=grp&wait=true&timeout=200", http.StatusOK)
	if len(held.Messages) != 0 || len(held.Gaps) != 1 || held.Gaps[0].FromOffset != 0 || held.Gaps[0].ToOffset != 0 {
		t.Fatalf("pop inside the window = %d messages, gaps %+v; want none and the gap of offset 0", len(held.Messages), held.Gaps)
	}
}

// popResponse pops through path and decodes the answer, requiring status.
func (c *adminClient) popResponse(path string, status int) api.PopResponse {
	c.t.Helper()
	st, raw := c.do("GET", path, nil)
	if st != status {
		c.t.Fatalf("GET %s = %d, want %d: %s", path, st, status, raw)
	}
	var resp api.PopResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		c.t.Fatalf("GET %s: %v: %s", path, err, raw)
	}
	return resp
}

// A gap is news even when the partition has nothing new: a pop of any
// partition claims one where retention deleted past the group's position,
// tells the gap with no messages, and moves the group past it; offsets it
// had acked ahead are not counted as lost.
func TestPopTellsAGapWithNothingNew(t *testing.T) {
	c := setupAdmin(t, nil)
	ctx := context.Background()
	c.configure("n", `{"retentionEnabled":true,"retentionSeconds":60}`)
	c.pushNumbered("n", "p", 3)                                   // offsets 0..2
	c.ack(c.pop("n", "p", "slow", 1)[0], "slow", "completed", "") // slow consumed offset 0
	ahead := c.pop("n", "p", "ahead", 3)                          // ahead acks 1 and 2 but not 0
	c.ack(ahead[1], "ahead", "completed", "")
	c.ack(ahead[2], "ahead", "completed", "")
	c.clock.Advance(10 * time.Minute) // ahead's lease on offset 0 lapses
	c.sweep(3)

	resp := c.popResponse("/api/v1/pop/queue/n?consumerGroup=slow&batch=10&wait=false", http.StatusOK)
	if len(resp.Messages) != 0 || len(resp.Gaps) != 1 || resp.Gaps[0].FromOffset != 1 || resp.Gaps[0].ToOffset != 2 ||
		resp.Gaps[0].Messages != 2 {
		t.Fatalf("slow's pop = %d messages, gaps %+v; want none and the gap of offsets 1..2 (2 messages)", len(resp.Messages), resp.Gaps)
	}
	if st, raw := c.do("GET", "/api/v1/pop/queue/n?consumerGroup=slow&batch=10&wait=false", nil); st != http.StatusNoContent {
		t.Fatalf("slow's second pop = %d %s, want 204: the gap is told once", st, raw)
	}
	// ahead lost offset 0 only (1 and 2 were acked ahead).
	resp = c.popResponse("/api/v1/pop/queue/n?consumerGroup=ahead&batch=10&wait=false", http.StatusOK)
	if len(resp.Gaps) != 1 || resp.Gaps[0].FromOffset != 0 || resp.Gaps[0].ToOffset != 2 || resp.Gaps[0].Messages != 1 {
		t.Fatalf("ahead's pop: gaps %+v, want offsets 0..2 with 1 message lost", resp.Gaps)
	}
	var committed int64
	if err := c.srv.Pool.QueryRow(ctx, `SELECT committed FROM lethe.cursors WHERE group_name = 'ahead'`).Scan(&committed); err != nil || committed != 2 {
		t.Fatalf("ahead's cursor at %d (%v), want 2: past what retention deleted", committed, err)
	}
}
