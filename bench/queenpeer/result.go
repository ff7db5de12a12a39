package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/meter"
)

// result is one run, printed as a line and written as a JSON line.
type result struct {
	System       string     `json:"system"`
	URL          string     `json:"url"`
	Queue        string     `json:"queue"`
	Group        string     `json:"consumer_group"`
	Messages     int        `json:"messages"`
	PayloadBytes int        `json:"payload_bytes"`
	Partitions   int        `json:"partitions"`
	PushClients  int        `json:"push_clients"`
	PushBatch    int        `json:"push_batch"`
	Consumers    int        `json:"consumers"`
	PopBatch     int        `json:"pop_batch"`
	At           time.Time  `json:"at"`
	Push         phase      `json:"push"`
	PopAck       phase      `json:"pop_ack"`
	Pops         drainStats `json:"pops"`
	Ledger       tally      `json:"ledger"`
	Complete     bool       `json:"complete"`
}

// line is the one-line summary.
func (r *result) line() string {
	g := meter.Group
	s := fmt.Sprintf("queenpeer %s: push %s msg/s (%s in %.1f s); pop+ack %s msg/s (%.1f s), pop p50 %.1f ms p99 %.1f ms, %s of %s pops empty",
		r.System, g(int64(r.Push.Rate)), g(int64(r.Messages)), r.Push.Seconds, g(int64(r.PopAck.Rate)), r.PopAck.Seconds,
		r.Pops.Pop.P50, r.Pops.Pop.P99, g(r.Pops.EmptyPops), g(r.Pops.Pops))
	l := r.Ledger
	s += fmt.Sprintf("; %s delivered once, %s missing, %d duplicates", g(int64(l.Delivered)), g(int64(l.Missing)), l.Duplicates)
	if l.Unknown > 0 {
		s += fmt.Sprintf(", %d unknown", l.Unknown)
	}
	if e := r.Push.Errors + r.PopAck.Errors; e > 0 {
		s += fmt.Sprintf("; %d errors (push %d, pop+ack %d), first: %s", e, r.Push.Errors, r.PopAck.Errors, firstOf(r.Push.FirstError, r.PopAck.FirstError))
	}
	if !r.Push.Done {
		s += "; push did not finish, nothing drained"
	} else if !r.PopAck.Done {
		s += "; drain hit the time limit"
	}
	return s
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// appendJSON adds the result to path as one JSON line.
func (r *result) appendJSON(path string) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
