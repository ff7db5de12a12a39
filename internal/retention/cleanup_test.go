package retention

import (
	"sync"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// day is a day of the fake clock.
const day = 24 * time.Hour

func TestEmptyIdlePartitionsAreDeletedAndDeadLettersPinThem(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	forgotten := map[string]int{}
	e := setup(t)
	e.svc.cfg.Forget = func(q string) { mu.Lock(); forgotten[q]++; mu.Unlock() }
	e.configure("q", map[string]any{"maxWaitTimeSeconds": 60, "retryDelay": 0})
	e.pushSegment("q", "empty", 1)
	e.pushSegment("q", "pinned", 1)
	popped := e.pop("q", "pinned", "g", 1)
	if _, err := e.eng.Ack(e.ctx, []api.AckRequest{{TransactionID: popped.Messages[0].TransactionID,
		PartitionID: popped.Messages[0].PartitionID, Status: api.AckDLQ, ConsumerGroup: "g"}}, "g"); err != nil {
		t.Fatal(err)
	}
	oldEmpty := e.partitionID("q", "empty")
	e.clock.Advance(2 * time.Minute)
	if res := e.cycle(); res.MaxWait.Segments != 2 || res.PartitionsDeleted != 0 || !res.CleanupRan {
		t.Fatalf("first cycle: %+v; want both segments evicted and no partition deleted yet", res)
	}

	e.clock.Advance(31 * day)
	res := e.cycle()
	if res.PartitionsDeleted != 1 {
		t.Fatalf("deleted %d partitions, want the idle empty one", res.PartitionsDeleted)
	}
	if n := e.count(`SELECT count(*) FROM lethe.partitions WHERE id = $1`, oldEmpty); n != 0 {
		t.Fatal("the empty idle partition is still there")
	}
	if n := e.count(`SELECT count(*) FROM lethe.partitions WHERE name = 'pinned'`); n != 1 {
		t.Fatal("the partition holding a dead letter was deleted")
	}
	if forgotten["q"] != 1 {
		t.Fatalf("Forget calls = %v, want one for q", forgotten)
	}
	if h, _ := e.svc.reads.RetentionHistory(e.ctx, HistoryQuery{Rule: RulePartitionCleanup, From: t0, To: e.clock.Now().Add(time.Second), Limit: 10}); len(h) != 1 || h[0].Partition != "empty" {
		t.Fatalf("cleanup history = %+v, want one row for partition empty", h)
	}

	// At most once a minute.
	if res := e.cycle(); res.CleanupRan {
		t.Fatal("cleanup ran twice within a minute")
	}
	e.clock.Advance(time.Minute)
	if res := e.cycle(); !res.CleanupRan {
		t.Fatal("cleanup did not run a minute later")
	}

	// A push recreates the partition under a new id.
	e.pushSegment("q", "empty", 1)
	if e.partitionID("q", "empty") == oldEmpty {
		t.Fatal("the partition came back with its old id")
	}
}

func TestPartitionCleanupCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *Config) { c.KeepPartitions = true })
	e.configure("q", map[string]any{"maxWaitTimeSeconds": 60})
	e.pushSegment("q", "p", 1)
	e.clock.Advance(2 * time.Minute)
	e.cycle()
	e.clock.Advance(60 * day)
	if res := e.cycle(); res.CleanupRan || res.PartitionsDeleted != 0 {
		t.Fatalf("cleanup ran with KeepPartitions: %+v", res)
	}
	if n := e.count(`SELECT count(*) FROM lethe.partitions`); n != 1 {
		t.Fatalf("%d partitions left, want 1", n)
	}
}

func TestDeadLettersAgeOutOnlyWhenConfigured(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.pushSegment("q", "p", 2)
	popped := e.pop("q", "p", "g", 2)
	for _, m := range popped.Messages {
		if _, err := e.eng.Ack(e.ctx, []api.AckRequest{{TransactionID: m.TransactionID, PartitionID: m.PartitionID,
			LeaseID: m.LeaseID, Status: api.AckDLQ, ConsumerGroup: "g"}}, "g"); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Advance(400 * day)
	if res := e.cycle(); res.DeadLettersPurged != 0 {
		t.Fatalf("purged %d dead letters with DLQ_RETENTION_DAYS unset; want them kept", res.DeadLettersPurged)
	}
	keep7 := e.newService(e.pool, func(c *Config) { c.DLQRetentionDays = 7; c.BatchSize = 1 })
	res, err := keep7.RunCycle(e.ctx)
	if err != nil || res.DeadLettersPurged != 2 || res.MetricsPurgeErr != nil {
		t.Fatalf("with 7 days: %+v, %v; want both dead letters purged in batches of 1", res, err)
	}
	if n := e.count(`SELECT count(*) FROM lethe.dead_letters`); n != 0 {
		t.Fatalf("%d dead letters left", n)
	}
}

func TestAllModeSubscriptionsWithoutCursorsAreReclaimed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"maxWaitTimeSeconds": 60})
	e.pop("q", "", "all-mode", 1) // registers, finds nothing, no cursor
	if _, err := e.eng.Pop(e.ctx, enginePop("q", "new-mode", "new")); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(31 * day)
	res := e.cycle()
	if res.SubscriptionsDeleted != 1 {
		t.Fatalf("deleted %d subscriptions, want the all-mode one", res.SubscriptionsDeleted)
	}
	if n := e.count(`SELECT count(*) FROM lethe.subscriptions WHERE group_name = 'new-mode'`); n != 1 {
		t.Fatal("a subscription with a start point was deleted; it cannot be recreated")
	}
}

func TestASubscriptionOwedDataIsNotReclaimed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "completedRetentionSeconds": 60})
	e.pop("q", "", "offline", 1) // all mode, no cursor
	e.pushSegment("q", "p", 2)
	e.consume("q", "p", "early", 2)
	e.clock.Advance(31 * day)
	res := e.cycle()
	if res.SubscriptionsDeleted != 0 || res.CompletedRetention.Segments != 0 {
		t.Fatalf("deleted %d subscriptions and %+v; want offline's subscription, and so its data, kept",
			res.SubscriptionsDeleted, res.CompletedRetention)
	}
	if got := offsets(e.consume("q", "p", "offline", 2)); !equalInts(got, []int64{0, 1}) {
		t.Fatalf("offline read %v, want [0 1]", got)
	}
}
