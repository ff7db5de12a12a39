package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// procRequestTimeout is the longest any request of the fault suite may take.
// A request cut off by it counts as a hang.
const procRequestTimeout = 10 * time.Second

// procAPI speaks lethe's HTTP API to whichever process currently serves
// it, and counts every outcome in a tally.
type procAPI struct {
	base  func() string
	http  *http.Client
	tally *procTally
}

func procNewAPI(base func() string, tally *procTally) *procAPI {
	transport := &http.Transport{MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second}
	return &procAPI{base: base, tally: tally, http: &http.Client{Timeout: procRequestTimeout, Transport: transport}}
}

// procReply is one request's outcome: a status and body, or a transport error.
type procReply struct {
	status     int
	body       []byte
	retryAfter string // the Retry-After header
	err        error
	took       time.Duration
}

// do sends one request and tallies its outcome under route.
func (a *procAPI) do(route, method, path string, body any) procReply {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return procReply{err: err}
		}
		rd = bytes.NewReader(b)
	}
	began := time.Now()
	rep := procReply{}
	req, err := http.NewRequestWithContext(context.Background(), method, a.base()+path, rd)
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		var resp *http.Response
		if resp, err = a.http.Do(req); err == nil {
			rep.status, rep.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
			rep.body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
	}
	rep.err, rep.took = err, time.Since(began)
	a.tally.add(route, rep)
	return rep
}

func (a *procAPI) push(items []api.PushItem) ([]api.PushResult, procReply) {
	rep := a.do("push", http.MethodPost, "/api/v1/push", api.PushRequest{Items: items})
	var results []api.PushResult
	if rep.err == nil && rep.status == http.StatusCreated {
		if err := json.Unmarshal(rep.body, &results); err != nil {
			rep.err = fmt.Errorf("push answered 201 with an unreadable body: %w", err)
		}
	}
	return results, rep
}

// pop leases up to batch messages for group, from one named partition or
// (partition "") any partition with work, long-polling for waitMs.
func (a *procAPI) pop(queue, partition, group string, batch, waitMs int) (api.PopResponse, procReply) {
	path := "/api/v1/pop/queue/" + url.PathEscape(queue)
	if partition != "" {
		path += "/partition/" + url.PathEscape(partition)
	}
	q := url.Values{"consumerGroup": {group}, "batch": {fmt.Sprint(batch)},
		"wait": {fmt.Sprint(waitMs > 0)}, "timeout": {fmt.Sprint(waitMs)}}
	rep := a.do("pop", http.MethodGet, path+"?"+q.Encode(), nil)
	var resp api.PopResponse
	if rep.err == nil && rep.status == http.StatusOK {
		if err := json.Unmarshal(rep.body, &resp); err != nil {
			rep.err = fmt.Errorf("pop answered 200 with an unreadable body: %w", err)
		}
	}
	return resp, rep
}

// ackAll acks every message of a pop as completed, in one batch.
func (a *procAPI) ackAll(group string, msgs []api.Message) ([]api.AckResult, procReply) {
	acks := make([]api.AckRequest, len(msgs))
	for i, m := range msgs {
		acks[i] = api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID,
			LeaseID: m.LeaseID, Status: api.AckCompleted, ConsumerGroup: group}
	}
	rep := a.do("ack", http.MethodPost, "/api/v1/ack/batch", api.AckBatchRequest{ConsumerGroup: group, Acknowledgments: acks})
	var results []api.AckResult
	if rep.err == nil && rep.status == http.StatusOK {
		if err := json.Unmarshal(rep.body, &results); err != nil {
			rep.err = fmt.Errorf("ack answered 200 with an unreadable body: %w", err)
		}
	}
	return results, rep
}

// configure sets queue options; options is a JSON object.
func (a *procAPI) configure(queue, options string) procReply {
	return a.do("configure", http.MethodPost, "/api/v1/configure",
		api.ConfigureRequest{Queue: queue, Options: json.RawMessage(options)})
}

func (a *procAPI) health() procReply { return a.do("health", http.MethodGet, "/health", nil) }

// outcome names a reply for the tally: its status, or the kind of transport
// error (a timeout is a hang: the server kept the request past
// procRequestTimeout).
func (r procReply) outcome() string {
	var timeout interface{ Timeout() bool }
	switch {
	case r.err == nil:
		return fmt.Sprint(r.status)
	case errors.As(r.err, &timeout) && timeout.Timeout():
		return "hang"
	case errors.Is(r.err, syscall.ECONNREFUSED):
		return "refused"
	// The server went away mid-request: the peer reset the connection, or
	// the client's transport closed it while still writing the request
	// (net.ErrClosed: it had read the end of the connection meanwhile).
	case errors.Is(r.err, syscall.ECONNRESET), errors.Is(r.err, syscall.EPIPE), errors.Is(r.err, io.EOF),
		errors.Is(r.err, io.ErrUnexpectedEOF), errors.Is(r.err, net.ErrClosed),
		strings.Contains(r.err.Error(), "server closed idle connection"):
		return "reset"
	}
	return "error"
}

// procTally counts request outcomes by phase, route and outcome, and keeps
// the slowest request per phase.
type procTally struct {
	phase atomic.Value // string

	mu      sync.Mutex
	counts  map[string]int // "phase route outcome"
	slowest map[string]time.Duration
	samples map[string]string // first body or error seen per key, for reports

	forbidden []string // text an error body must not carry (set before use)
	badBodies []string // error bodies that are not {"error": "..."} or carry forbidden text
}

func procNewTally(phase string) *procTally {
	t := &procTally{counts: map[string]int{}, slowest: map[string]time.Duration{}, samples: map[string]string{}}
	t.phase.Store(phase)
	return t
}

// setPhase labels the requests that start from now on.
func (t *procTally) setPhase(p string) { t.phase.Store(p) }

// forbid makes error bodies containing any of texts count as bad bodies.
func (t *procTally) forbid(texts ...string) { t.forbidden = texts }

func (t *procTally) add(route string, r procReply) {
	phase := t.phase.Load().(string)
	outcome := r.outcome()
	// A client can only back off politely if a 503 says when to retry.
	if outcome == "503" && route != "health" && r.retryAfter == "" {
		outcome = "503-without-Retry-After"
	}
	key := phase + " " + route + " " + outcome
	t.mu.Lock()
	defer t.mu.Unlock()
	if r.err == nil && r.status >= 400 && route != "health" {
		t.checkErrorBody(route, r.body)
	}
	t.counts[key]++
	t.slowest[phase] = max(t.slowest[phase], r.took)
	if _, ok := t.samples[key]; !ok {
		sample := string(r.body)
		if r.err != nil {
			sample = r.err.Error()
		}
		if len(sample) > 300 {
			sample = sample[:300] + "..."
		}
		t.samples[key] = sample
	}
}

// checkErrorBody records body if it is not a JSON error a person can read
// or if it carries forbidden text (SQL, a DSN, a host, a user name).
func (t *procTally) checkErrorBody(route string, body []byte) {
	var e api.Error
	bad := json.Unmarshal(body, &e) != nil || e.Error == ""
	for _, f := range t.forbidden {
		bad = bad || strings.Contains(string(body), f)
	}
	if bad && len(t.badBodies) < 10 {
		t.badBodies = append(t.badBodies, fmt.Sprintf("%s: %.300s", route, body))
	}
}

// errorBodies returns the bad error bodies seen (at most ten).
func (t *procTally) errorBodies() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.badBodies...)
}

// report lists the counts, one "phase route outcome: n" per line.
func (t *procTally) report() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := make([]string, 0, len(t.counts))
	for k := range t.counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s: %d\n", k, t.counts[k])
	}
	for p, d := range t.slowest {
		fmt.Fprintf(&b, "  slowest request in %s: %v\n", p, d.Round(time.Millisecond))
	}
	return b.String()
}

// unexpected lists the outcomes for which allowed is false, with a sample
// body or error of each.
func (t *procTally) unexpected(allowed func(route, outcome string) bool) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var bad []string
	for k, n := range t.counts {
		f := strings.Fields(k)
		if !allowed(f[1], f[2]) {
			bad = append(bad, fmt.Sprintf("%s x%d (e.g. %s)", k, n, t.samples[k]))
		}
	}
	slices.Sort(bad)
	return bad
}
