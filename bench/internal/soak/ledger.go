package soak

import "sync"

// ledger knows, for one queue, which sequence numbers were pushed (the
// push answered 201) and how many times each consumer group received each.
// Sequence numbers are dense from 0, so slices indexed by them are the
// cheapest record: a 2-hour soak at 600 msg/s is 4.3 million bytes per
// group.
type ledger struct {
	mu       sync.Mutex
	next     int64 // next sequence number to hand out
	nPushed  int64 // how many of pushed are true
	pushed   []bool
	received [][]uint8 // [group][seq], saturating at 255
	unique   []int64   // per group: sequence numbers received at least once
	dups     []int64   // per group: deliveries after the first
	// gotPushed counts, per group, the pushed numbers received: a message
	// can arrive before its push's answer does, so it is counted by
	// whichever of receive and pushedOK comes second.
	gotPushed []int64
	strangers int64 // deliveries whose payload no push of this run made
}

func newLedger(groups int) *ledger {
	return &ledger{received: make([][]uint8, groups), unique: make([]int64, groups),
		dups: make([]int64, groups), gotPushed: make([]int64, groups)}
}

// take hands out n consecutive sequence numbers and returns the first.
func (l *ledger) take(n int) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := l.next
	l.next += int64(n)
	for int64(len(l.pushed)) < l.next {
		l.pushed = append(l.pushed, false)
	}
	return first
}

// pushedOK records that first..first+n-1 were stored.
func (l *ledger) pushedOK(first int64, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range int64(n) {
		seq := first + i
		if l.pushed[seq] {
			continue
		}
		l.pushed[seq] = true
		l.nPushed++
		for g, r := range l.received {
			if seq < int64(len(r)) && r[seq] > 0 {
				l.gotPushed[g]++
			}
		}
	}
}

// receive records one delivery of seq to group g.
func (l *ledger) receive(g int, seq int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seq < 0 || seq >= l.next {
		l.strangers++
		return
	}
	r := l.received[g]
	for int64(len(r)) <= seq {
		r = append(r, 0)
	}
	l.received[g] = r
	switch {
	case r[seq] > 0:
		l.dups[g]++
	case l.pushed[seq]:
		l.gotPushed[g]++
		l.unique[g]++
	default:
		l.unique[g]++
	}
	if r[seq] < 255 {
		r[seq]++
	}
}

// Delivery is the ledger's account of one queue.
type Delivery struct {
	Queue  string `json:"queue"`
	Pushed int64  `json:"pushed"`      // pushes answered 201
	Failed int64  `json:"push_failed"` // messages of pushes that failed
	Groups []GroupDelivery
	// Strangers are deliveries whose payload this run did not push.
	Strangers int64 `json:"strangers"`
}

// GroupDelivery is what one consumer group received of a queue.
type GroupDelivery struct {
	Group    string `json:"group"`
	Received int64  `json:"received"`   // distinct messages
	Lost     int64  `json:"lost"`       // pushed, never received
	Dups     int64  `json:"duplicates"` // deliveries after the first
	// Unpushed were received although their push failed (the server
	// stored them and the answer did not arrive): not an error.
	Unpushed int64 `json:"received_after_failed_push"`
	// RecordedLost is what lethe's retention history says this group lost
	// unread (retentionSeconds): lost by a rule, not quietly.
	RecordedLost int64 `json:"recorded_lost_by_rule"`
}

// account tallies the queue.
func (l *ledger) account(queue string, groups []string) Delivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := Delivery{Queue: queue, Pushed: l.nPushed, Failed: l.next - l.nPushed, Strangers: l.strangers}
	for g, name := range groups {
		d.Groups = append(d.Groups, GroupDelivery{Group: name, Received: l.unique[g], Dups: l.dups[g],
			Lost: l.nPushed - l.gotPushed[g], Unpushed: l.unique[g] - l.gotPushed[g]})
	}
	return d
}

// missing is how many pushed messages group g has not received yet.
func (l *ledger) missing(g int) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nPushed - l.gotPushed[g]
}

// tally is the pushed count and the distinct messages received, summed
// over groups, without walking the record.
func (l *ledger) tally() (pushed, received int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, u := range l.unique {
		received += u
	}
	return l.nPushed, received
}
