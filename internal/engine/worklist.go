package engine

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
)

// A wildcard pop's listing reads every partition of the queue (about 12 ms
// at 10,000 partitions), whatever the work. So one listing lists up to
// workListSize partitions with work, the pop takes what it may claim, and
// the rest wait in this replica's work list of the queue and group for the
// next pops, each handed to one pop at a time. The list is a hint: a claim
// checks everything again, and a round of candidates from the list that
// leaves a pop short makes the next round list from the database, so a pop
// still answers empty only after a listing found nothing.
const (
	workListSize = 512
	// workListMaxAge bounds how long partitions that got work after a
	// listing wait behind the ones it found.
	workListMaxAge = time.Second
	// maxWorkLists bounds the memory of the lists: past it, a listing
	// keeps nothing for later pops.
	maxWorkLists = 4096
	// recentClaims is how many finished claims a listing that ran
	// meanwhile can be told about (a listing at 10,000 partitions takes
	// about 12 ms; a replica finishes a few dozen claims in that time).
	recentClaims = 1024
)

type workKey struct {
	queue int64
	group string
}

// lentKey names a partition handed to a pop of the group.
type lentKey struct {
	group string
	pid   uuid.UUID
}

// workList is what one listing found that no pop has taken yet.
type workList struct {
	gen      uint64 // which listing, so a pop gives back only to its own
	listedAt time.Time
	fromAt   *time.Time // the subscription start it was listed for
	cands    []candidate
}

// workLists are the replica's work lists, by queue and group, and the
// partitions its pops are claiming right now, which no list may hold: a
// listing that ran while they were claimed sees them free.
type workLists struct {
	mu    sync.Mutex
	gen   uint64
	lists map[workKey]*workList
	lent  map[lentKey]struct{}
	// recent is a ring of the last recentClaims partitions whose claims
	// ended; seq counts them all (the next goes to recent[seq%len]).
	recent [recentClaims]lentKey
	seq    uint64
	// listing holds, per key, a channel closed when the listing running
	// for it ends: pops that find the list empty meanwhile wait for it
	// rather than read every partition of the queue at the same time.
	listing map[workKey]chan struct{}
}

func newWorkLists() *workLists {
	return &workLists{lists: make(map[workKey]*workList), lent: make(map[lentKey]struct{}),
		listing: make(map[workKey]chan struct{})}
}

// begin registers a listing for k and answers the mark to pass to adopt
// and the function that ends it (call it after adopt, or on failure).
func (w *workLists) begin(k workKey) (mark uint64, end func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	done := make(chan struct{})
	if _, ok := w.listing[k]; !ok {
		w.listing[k] = done
	}
	return w.seq, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.listing[k] == done {
			delete(w.listing, k)
		}
		close(done)
	}
}

// await waits for the listing running for k, if any, and answers whether
// there was one.
func (w *workLists) await(ctx context.Context, k workKey) bool {
	w.mu.Lock()
	done := w.listing[k]
	w.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
	return true
}

// take hands out up to n candidates, not among tried, from the head of the
// list of k, if it was listed for the same subscription start within
// workListMaxAge of now. It answers the list's generation for settle.
func (w *workLists) take(k workKey, fromAt *time.Time, now time.Time, n int, tried []uuid.UUID) ([]candidate, uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.lists[k]
	if l == nil {
		return nil, 0
	}
	if !usable(l, fromAt, now) {
		delete(w.lists, k)
		return nil, 0
	}
	var out []candidate
	i := 0
	for ; i < len(l.cands) && len(out) < n; i++ {
		if !slices.Contains(tried, l.cands[i].pid) {
			out = append(out, l.cands[i])
			w.lent[lentKey{k.group, l.cands[i].pid}] = struct{}{}
		}
	}
	// An emptied list stays (until it ages or another listing replaces
	// it) so that what the pop does not try can come back to it.
	l.cands = l.cands[i:]
	return out, l.gen
}

// lend hands c, a partition named outside any listing (wakeHint), to a pop
// of k's group, unless another pop of this replica is claiming it.
func (w *workLists) lend(k workKey, c candidate) []candidate {
	w.mu.Lock()
	defer w.mu.Unlock()
	lk := lentKey{k.group, c.pid}
	if _, ok := w.lent[lk]; ok {
		return nil
	}
	w.lent[lk] = struct{}{}
	return []candidate{c}
}

func usable(l *workList, fromAt *time.Time, now time.Time) bool {
	age := now.Sub(l.listedAt)
	sameStart := (fromAt == nil) == (l.fromAt == nil) && (fromAt == nil || fromAt.Equal(*l.fromAt))
	return sameStart && age >= 0 && age <= workListMaxAge
}

// adopt takes a listing made at now, begun at mark: it hands the first n
// to the caller and makes the rest the list of k, leaving out of the list
// the partitions other pops are claiming or claimed since mark. The
// caller's own may include those, last: a pop whose listing found work
// tries it before answering empty. It answers the list's generation for
// settle.
func (w *workLists) adopt(k workKey, fromAt *time.Time, now time.Time, mark uint64, listed []candidate, n int) ([]candidate, uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	since := w.claimedSince(k.group, mark)
	fresh := make([]candidate, 0, len(listed))
	var busy []candidate
	for _, c := range listed {
		lk := lentKey{k.group, c.pid}
		if _, ok := w.lent[lk]; ok || since[lk] {
			busy = append(busy, c)
		} else {
			fresh = append(fresh, c)
		}
	}
	mine := slices.Clone(fresh[:min(n, len(fresh))])
	rest := fresh[len(mine):]
	mine = append(mine, busy[:min(n-len(mine), len(busy))]...)
	for _, c := range mine {
		w.lent[lentKey{k.group, c.pid}] = struct{}{}
	}
	w.gen++
	switch {
	case len(rest) == 0:
		delete(w.lists, k)
	case w.lists[k] == nil && len(w.lists) >= maxWorkLists && !w.evictStale(now):
		// Full of lists in use: keep nothing.
	default:
		w.lists[k] = &workList{gen: w.gen, listedAt: now, fromAt: fromAt, cands: slices.Clone(rest)}
	}
	return mine, w.gen
}

// claimedSince answers the partitions of group whose claims ended after
// mark (all of the recent ones when more ended than are remembered).
func (w *workLists) claimedSince(group string, mark uint64) map[lentKey]bool {
	out := make(map[lentKey]bool)
	for s := w.seq - min(w.seq-mark, recentClaims); s < w.seq; s++ {
		if lk := w.recent[s%recentClaims]; lk.group == group {
			out[lk] = true
		}
	}
	return out
}

// settle ends a pop's round with cands, taken from the listing gen of k:
// they are no longer lent, and those the pop did not try go back to the
// head of that list, unless a newer listing replaced it.
func (w *workLists) settle(k workKey, gen uint64, cands, untried []candidate) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range cands {
		lk := lentKey{k.group, c.pid}
		delete(w.lent, lk)
		if !slices.ContainsFunc(untried, func(u candidate) bool { return u.pid == c.pid }) {
			w.recent[w.seq%recentClaims] = lk
			w.seq++
		}
	}
	if l := w.lists[k]; l != nil && l.gen == gen && len(untried) > 0 {
		l.cands = append(slices.Clone(untried), l.cands...)
	}
}

// evictStale drops the lists older than workListMaxAge and answers whether
// there is room for another.
func (w *workLists) evictStale(now time.Time) bool {
	for k, l := range w.lists {
		if now.Sub(l.listedAt) > workListMaxAge || now.Before(l.listedAt) {
			delete(w.lists, k)
		}
	}
	return len(w.lists) < maxWorkLists
}
