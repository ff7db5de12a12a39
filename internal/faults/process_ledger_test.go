package faults_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// procPayload is what the producers push: who pushed it, its place in that
// producer's sequence, and padding of a length that varies with seq, so a
// payload cut short or swapped with another is noticed.
type procPayload struct {
	Producer  int    `json:"producer"`
	Seq       int    `json:"seq"`
	Partition string `json:"partition"`
	Pad       string `json:"pad"`
}

func procNewPayload(producer, seq int, partition string) procPayload {
	return procPayload{Producer: producer, Seq: seq, Partition: partition,
		Pad: strings.Repeat(string(rune('a'+seq%26)), seq%97)}
}

func (p procPayload) txnID() string { return fmt.Sprintf("p%d-s%07d", p.Producer, p.Seq) }

// procLedger is the test's own record of the truth: what lethe acknowledged
// (201) and what it delivered and confirmed to the consumers. Checks compare
// the two.
type procLedger struct {
	mu sync.Mutex

	attempted map[string]procPayload // every item ever sent in a push
	acked     map[string]procPayload // items of pushes answered 201
	ackOrder  []string               // acked txids in acknowledgement order

	delivered map[string]int       // deliveries per txid
	storedAs  map[string]string    // txid -> message id of its first delivery
	confirmed map[string]time.Time // txid -> when its consumer ack succeeded
	maxFirst  map[string]int       // "partition/producer" -> highest seq delivered first

	// forgiveBefore: consumer acks confirmed before it may be forgotten
	// (PostgreSQL crashed since; acks commit with synchronous_commit=off).
	forgiveBefore time.Time

	redelivered       int // deliveries of a txid already delivered, not yet confirmed
	afterAck          int // deliveries of a txid whose ack was confirmed (and may not be forgotten)
	afterAckForgiven  int // the same, for acks a PostgreSQL crash may have forgotten
	outOfOrder        int
	storedTwice       int
	unknown           int
	corrupt           int
	violationExamples []string
}

func procNewLedger() *procLedger {
	return &procLedger{attempted: map[string]procPayload{}, acked: map[string]procPayload{},
		delivered: map[string]int{}, storedAs: map[string]string{}, confirmed: map[string]time.Time{},
		maxFirst: map[string]int{}}
}

func (l *procLedger) attempt(items []procPayload) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range items {
		l.attempted[p.txnID()] = p
	}
}

func (l *procLedger) acknowledge(items []procPayload) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range items {
		if _, dup := l.acked[p.txnID()]; !dup {
			l.acked[p.txnID()] = p
			l.ackOrder = append(l.ackOrder, p.txnID())
		}
	}
}

// forgiveAcksUntil marks consumer acks confirmed before now as forgettable.
func (l *procLedger) forgiveAcksUntil(now time.Time) {
	l.mu.Lock()
	l.forgiveBefore = now
	l.mu.Unlock()
}

// deliver records the messages of one pop response.
func (l *procLedger) deliver(msgs []api.Message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range msgs {
		l.deliverOne(m)
	}
}

func (l *procLedger) deliverOne(m api.Message) {
	sent, known := l.attempted[m.TransactionID]
	var got procPayload
	switch {
	case !known:
		l.unknown++
		l.violation("delivered %s, which no producer sent", m.TransactionID)
		return
	case json.Unmarshal(m.Data, &got) != nil || got != sent || m.Partition != sent.Partition:
		l.corrupt++
		l.violation("%s delivered with payload %.80s in partition %s, sent %+v", m.TransactionID, m.Data, m.Partition, sent)
		return
	}
	n := l.delivered[m.TransactionID]
	l.delivered[m.TransactionID] = n + 1
	if n == 0 {
		l.storedAs[m.TransactionID] = m.ID
		key := fmt.Sprintf("%s/%d", sent.Partition, sent.Producer)
		if last, ok := l.maxFirst[key]; ok && sent.Seq < last {
			l.outOfOrder++
			l.violation("%s (seq %d) first delivered after seq %d of the same producer and partition", m.TransactionID, sent.Seq, last)
		}
		l.maxFirst[key] = max(l.maxFirst[key], sent.Seq)
		return
	}
	if first := l.storedAs[m.TransactionID]; first != m.ID {
		l.storedTwice++
		l.violation("%s stored twice: message ids %s and %s", m.TransactionID, first, m.ID)
	}
	at, wasConfirmed := l.confirmed[m.TransactionID]
	switch {
	case !wasConfirmed:
		l.redelivered++
	case at.Before(l.forgiveBefore):
		l.afterAckForgiven++
	default:
		l.afterAck++
		l.violation("%s delivered again (retryCount %d) after its ack succeeded at %s", m.TransactionID, m.RetryCount, at.Format(time.StampMilli))
	}
}

// confirm records consumer acks that lethe answered with success.
func (l *procLedger) confirm(results []api.AckResult, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range results {
		if r.Success {
			l.confirmed[r.TransactionID] = at
		}
	}
}

func (l *procLedger) violation(format string, args ...any) {
	if len(l.violationExamples) < 20 {
		l.violationExamples = append(l.violationExamples, fmt.Sprintf(format, args...))
	}
}

// ackedCount is how many pushed messages lethe has acknowledged so far.
func (l *procLedger) ackedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// lost lists acknowledged pushes never delivered, in acknowledgement order.
func (l *procLedger) lost() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var lost []string
	for _, id := range l.ackOrder {
		if l.delivered[id] == 0 {
			lost = append(lost, id)
		}
	}
	return lost
}

// procFigures are a run's numbers, for the log and the checks.
type procFigures struct {
	Attempted, Acked, Delivered, Deliveries, Confirmed int
	Lost, Redelivered, AfterAck, AfterAckForgiven      int
	OutOfOrder, StoredTwice, Unknown, Corrupt, Unacked int
	Violations                                         []string
	FirstLost                                          []string
}

func (l *procLedger) figures() procFigures {
	lost := l.lost()
	l.mu.Lock()
	defer l.mu.Unlock()
	f := procFigures{Attempted: len(l.attempted), Acked: len(l.acked), Delivered: len(l.delivered),
		Confirmed: len(l.confirmed), Lost: len(lost), Redelivered: l.redelivered, AfterAck: l.afterAck,
		AfterAckForgiven: l.afterAckForgiven, OutOfOrder: l.outOfOrder, StoredTwice: l.storedTwice,
		Unknown: l.unknown, Corrupt: l.corrupt, Violations: l.violationExamples}
	for id, n := range l.delivered {
		f.Deliveries += n
		if _, ok := l.acked[id]; !ok {
			f.Unacked++ // stored though its push was never answered 201: allowed
		}
	}
	f.FirstLost = lost[:min(len(lost), 10)]
	return f
}

func (f procFigures) String() string {
	return fmt.Sprintf("pushes sent %d, acknowledged %d; read back %d distinct (%d deliveries, %d acks confirmed); "+
		"lost %d; delivered again after a confirmed ack %d (forgiven after a PostgreSQL crash: %d); "+
		"redelivered before any confirmed ack %d; out of order %d; stored twice %d; unknown %d; corrupt %d; "+
		"stored without a 201 %d",
		f.Attempted, f.Acked, f.Delivered, f.Deliveries, f.Confirmed, f.Lost, f.AfterAck, f.AfterAckForgiven,
		f.Redelivered, f.OutOfOrder, f.StoredTwice, f.Unknown, f.Corrupt, f.Unacked)
}
