package engine

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
)

func cands(n int) []candidate {
	out := make([]candidate, n)
	for i := range out {
		out[i] = candidate{pid: uuid.New(), name: string(rune('a' + i))}
	}
	return out
}

func names(cs []candidate) string {
	s := ""
	for _, c := range cs {
		s += c.name
	}
	return s
}

var (
	testKey = workKey{queue: 1, group: "g"}
	t0      = time.Unix(1000, 0)
)

func TestWorkListHandsEachCandidateOnce(t *testing.T) {
	w := newWorkLists()
	mine, gen := w.adopt(testKey, nil, t0, 0, cands(7), 1)
	if names(mine) != "a" {
		t.Fatalf("the listing pop got %q, want a", names(mine))
	}
	got, g := w.take(testKey, nil, t0, 2, nil)
	if names(got) != "bc" || g != gen {
		t.Fatalf("first take: %q gen %d, want bc gen %d", names(got), g, gen)
	}
	// c was not tried: it comes back first.
	w.settle(testKey, g, got, got[1:])
	if got, _ = w.take(testKey, nil, t0, 2, nil); names(got) != "cd" {
		t.Fatalf("take after c came back: %q, want cd", names(got))
	}
	w.settle(testKey, g, got, got)
	if got, _ = w.take(testKey, nil, t0, 2, []uuid.UUID{got[0].pid}); names(got) != "de" {
		t.Fatalf("take skipping a tried one: %q, want de", names(got))
	}
	if got, _ = w.take(testKey, nil, t0, 5, nil); names(got) != "fg" {
		t.Fatalf("take of the rest: %q, want fg", names(got))
	}
	if got, _ = w.take(testKey, nil, t0, 5, nil); len(got) != 0 {
		t.Fatalf("take of an empty list: %q", names(got))
	}
}

// A listing runs while other pops claim: what they are claiming, and what
// they claimed after it began, it may have seen free. Neither goes into
// the new list.
func TestWorkListLeavesOutWhatOtherPopsClaim(t *testing.T) {
	w := newWorkLists()
	cs := cands(6)
	first, gen := w.adopt(testKey, nil, t0, 0, cs, 1) // a
	w.settle(testKey, gen, first, nil)                // claimed before the next listing began
	lent, _ := w.take(testKey, nil, t0, 1, nil)       // b, being claimed
	mark, end := w.begin(testKey)
	defer end()
	done, _ := w.take(testKey, nil, t0, 1, nil) // c, claimed while the listing ran
	w.settle(testKey, gen, done, nil)
	mine, _ := w.adopt(testKey, nil, t0, mark, cs, 1)
	rest, _ := w.take(testKey, nil, t0, 10, nil)
	if names(mine) != "a" || names(rest) != "def" {
		t.Fatalf("with b lent and c claimed during the listing: the pop got %q and the list %q, want a and def (lent %q)",
			names(mine), names(rest), names(lent))
	}
	// A listing that found only those is still tried by its pop: it may
	// be free again by now, and the pop must not answer empty untried.
	mine, _ = w.adopt(testKey, nil, t0, mark, cs[1:3], 4)
	if names(mine) != "bc" {
		t.Fatalf("a listing of only busy partitions gave its pop %q, want bc", names(mine))
	}
}

func TestWorkListIsNotUsedOldOrForAnotherStart(t *testing.T) {
	w := newWorkLists()
	start := t0.Add(-time.Hour)
	w.adopt(testKey, &start, t0, 0, cands(3), 0)
	if got, _ := w.take(testKey, nil, t0, 1, nil); len(got) != 0 {
		t.Errorf("a list for another subscription start was used")
	}
	w.adopt(testKey, &start, t0, 0, cands(3), 0)
	same := start
	if got, _ := w.take(testKey, &same, t0.Add(workListMaxAge), 1, nil); len(got) != 1 {
		t.Errorf("a list for the same start, at its age limit, was not used")
	}
	if got, _ := w.take(testKey, &same, t0.Add(workListMaxAge+time.Millisecond), 1, nil); len(got) != 0 {
		t.Errorf("a list older than %s was used", workListMaxAge)
	}
}

func TestWorkListGivesBackOnlyToItsListing(t *testing.T) {
	w := newWorkLists()
	_, old := w.adopt(testKey, nil, t0, 0, cands(2), 0)
	got, _ := w.take(testKey, nil, t0, 2, nil)
	w.adopt(testKey, nil, t0, 0, cands(1), 0)
	w.settle(testKey, old, got, got)
	got, gen := w.take(testKey, nil, t0, 5, nil)
	if len(got) != 1 {
		t.Fatalf("a newer listing got %d candidates back from an older one", len(got)-1)
	}
	w.settle(testKey, gen, got, nil)
	if len(w.lent) != 0 {
		t.Fatalf("%d partitions still lent after every pop settled", len(w.lent))
	}
}

func TestWorkListsAreBounded(t *testing.T) {
	w := newWorkLists()
	for i := range maxWorkLists {
		w.adopt(workKey{queue: int64(i), group: "g"}, nil, t0, 0, cands(1), 0)
	}
	extra := workKey{queue: -1, group: "g"}
	w.adopt(extra, nil, t0, 0, cands(1), 0)
	if len(w.lists) != maxWorkLists {
		t.Fatalf("%d lists kept, want the bound %d", len(w.lists), maxWorkLists)
	}
	// Once the others are stale, a new list evicts them.
	later := t0.Add(2 * workListMaxAge)
	w.adopt(extra, nil, later, 0, cands(1), 0)
	if got, _ := w.take(extra, nil, later, 1, nil); len(got) != 1 || len(w.lists) != 1 {
		t.Fatalf("after the others aged: %d lists, took %d", len(w.lists), len(got))
	}
}

// Pops that find the list empty while a listing runs wait for it instead
// of listing too.
func TestWorkListPopsAwaitTheRunningListing(t *testing.T) {
	w := newWorkLists()
	ctx := context.Background()
	if w.await(ctx, testKey) {
		t.Fatal("await with no listing running said it waited")
	}
	mark, end := w.begin(testKey)
	got := make(chan string)
	go func() {
		w.await(ctx, testKey)
		c, _ := w.take(testKey, nil, t0, 1, nil)
		got <- names(c)
	}()
	select {
	case g := <-got:
		t.Fatalf("a waiting pop took %q before the listing ended", g)
	case <-time.After(50 * time.Millisecond):
	}
	w.adopt(testKey, nil, t0, mark, cands(3), 1)
	end()
	if g := <-got; g != "b" {
		t.Fatalf("the waiting pop took %q after the listing, want b", g)
	}
}
