package lethebench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// client speaks lethe's HTTP API with connections kept alive for every
// load-generating goroutine.
type client struct {
	base string
	hc   *http.Client
}

func newClient(base string, conns int) *client {
	tr := &http.Transport{
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns * 2,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	return &client{base: base, hc: &http.Client{Transport: tr}}
}

func (c *client) close() { c.hc.CloseIdleConnections() }

// do sends body (nil for GET) and returns the status and the answer,
// decoded into into, or as it came when into is a *[]byte.
func (c *client) do(ctx context.Context, method, path string, body []byte, into any) (int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(msg))
	}
	if raw, ok := into.(*[]byte); ok {
		// The answer's bytes, unparsed (none on 204 or an empty body), in
		// one allocation when the length is known.
		if resp.ContentLength > 0 {
			*raw = make([]byte, resp.ContentLength)
			_, err = io.ReadFull(resp.Body, *raw)
		} else {
			*raw, err = io.ReadAll(resp.Body)
		}
		if err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: read answer: %w", method, path, err)
		}
		return resp.StatusCode, nil
	}
	if into != nil && resp.StatusCode != http.StatusNoContent {
		if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	_, _ = io.Copy(io.Discard, resp.Body) // the connection goes back to the pool only when drained
	return resp.StatusCode, nil
}

// pushAny2xx sends a push body and takes any 2xx as success: Queen means
// 201 but answers 200 (it writes its headers before the status, and
// uWebSockets then sends 200 OK).
func (c *client) pushAny2xx(ctx context.Context, body []byte) error {
	_, err := c.do(ctx, http.MethodPost, "/api/v1/push", body, nil)
	return err
}

// push sends a pre-assembled push body; 201 is the only success.
func (c *client) push(ctx context.Context, body []byte) error {
	status, err := c.do(ctx, http.MethodPost, "/api/v1/push", body, nil)
	if err == nil && status != http.StatusCreated {
		err = fmt.Errorf("push answered %d, want 201", status)
	}
	return err
}

type popped struct {
	TransactionID string          `json:"transactionId"`
	PartitionID   string          `json:"partitionId"`
	LeaseID       string          `json:"leaseId"`
	Data          json.RawMessage `json:"data"`
}

type popAnswer struct {
	Messages []popped `json:"messages"`
}

// popThin skips the payloads, which throughput runs do not look at.
type popThin struct {
	Messages []struct {
		TransactionID string `json:"transactionId"`
		PartitionID   string `json:"partitionId"`
		LeaseID       string `json:"leaseId"`
	} `json:"messages"`
}

// pop leases up to batch messages of queue to group; none on 204.
func (c *client) pop(ctx context.Context, queue, group string, batch int, wait time.Duration, withData bool) ([]popped, error) {
	path := popPath(queue, group, batch, wait)
	if withData {
		var a popAnswer
		_, err := c.do(ctx, http.MethodGet, path, nil, &a)
		return a.Messages, err
	}
	var raw []byte
	if _, err := c.do(ctx, http.MethodGet, path, nil, &raw); err != nil {
		return nil, err
	}
	return thinMessages(raw)
}

// popPath is the pop request for up to batch messages of queue for group,
// waiting up to wait for some (0: wait=false, answer at once).
func popPath(queue, group string, batch int, wait time.Duration) string {
	q := url.Values{"batch": {strconv.Itoa(batch)}, "consumerGroup": {group}, "wait": {"false"}}
	if wait > 0 {
		q.Set("wait", "true")
		q.Set("timeout", strconv.FormatInt(wait.Milliseconds(), 10))
	}
	return "/api/v1/pop/queue/" + url.PathEscape(queue) + "?" + q.Encode()
}

// popRaw is pop that returns the answer's bytes unread: none on 204, and
// none when a server answers 200 with an empty body (Queen does, for an
// empty pop, where it means 204).
func (c *client) popRaw(ctx context.Context, queue, group string, batch int) ([]byte, error) {
	var raw []byte
	_, err := c.do(ctx, http.MethodGet, popPath(queue, group, batch, 0), nil, &raw)
	return raw, err
}

// thinMessages pulls the three ids of each message out of a pop answer
// without decoding the payloads: the load generator shares the machine's
// two cores with lethe and PostgreSQL, and decoding 100 KiB answers with
// encoding/json cost it as much CPU as lethe spent serving them. It relies
// on lethe's key order (transactionId, ..., partitionId, leaseId within a
// message, after "messages":[) and on ids without escapes, both true here;
// popThin with encoding/json is the check (TestThinMessagesMatchesJSON).
func thinMessages(body []byte) ([]popped, error) {
	if len(body) == 0 {
		return nil, nil // 204: nothing to pop
	}
	i := bytes.Index(body, []byte(`"messages":[`))
	if i < 0 {
		return nil, fmt.Errorf("pop answer has no messages array")
	}
	rest := body[i:]
	var out []popped
	for {
		txn, r, ok := stringAfter(rest, `"transactionId":"`)
		if !ok {
			return out, nil
		}
		pid, r, ok := stringAfter(r, `"partitionId":"`)
		if !ok {
			return nil, fmt.Errorf("pop answer: message %d has no partitionId", len(out))
		}
		lease, r, ok := stringAfter(r, `"leaseId":"`)
		if !ok {
			return nil, fmt.Errorf("pop answer: message %d has no leaseId", len(out))
		}
		out = append(out, popped{TransactionID: txn, PartitionID: pid, LeaseID: lease})
		rest = r
	}
}

func stringAfter(b []byte, key string) (string, []byte, bool) {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return "", b, false
	}
	b = b[i+len(key):]
	j := bytes.IndexByte(b, '"')
	if j < 0 {
		return "", b, false
	}
	return string(b[:j]), b[j+1:], true
}

// ack completes msgs for group in one batch and fails unless every ack
// succeeded.
func (c *client) ack(ctx context.Context, group string, msgs []popped) error {
	var raw []byte
	if _, err := c.do(ctx, http.MethodPost, "/api/v1/ack/batch", ackBody(group, msgs), &raw); err != nil {
		return err
	}
	return ackAnswer(raw, len(msgs))
}

// ackBody builds the ack batch body by hand: the load generator shares the
// two cores with lethe and PostgreSQL, and json.Marshal of a map of 100
// acks, with encoding/json reading the answer, was a third of its CPU in
// pop+ack. TestAckBodyMatchesJSON checks it against encoding/json.
func ackBody(group string, msgs []popped) []byte {
	b := make([]byte, 0, 64+len(msgs)*(len(`{"transactionId":"","partitionId":"","leaseId":"","status":"completed"},`)+3*36))
	b = append(b, `{"consumerGroup":`...)
	b = appendJSONString(b, group)
	b = append(b, `,"acknowledgments":[`...)
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"transactionId":`...)
		b = appendJSONString(b, m.TransactionID)
		b = append(b, `,"partitionId":`...)
		b = appendJSONString(b, m.PartitionID)
		if m.LeaseID != "" {
			b = append(b, `,"leaseId":`...)
			b = appendJSONString(b, m.LeaseID)
		}
		b = append(b, `,"status":"completed"}`...)
	}
	return append(b, "]}"...)
}

// appendJSONString appends s as a JSON string: as it is when it is plain
// printable ASCII (ids and group names here), through encoding/json else.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// ackAnswer checks that an ack batch answer holds n results that all
// succeeded. The common answer (lethe's, every "success":true) is
// recognised without decoding it: a quote inside a JSON string is always
// escaped, so the pattern only matches a result's own field. Anything else
// is decoded, for its error.
func ackAnswer(raw []byte, n int) error {
	if bytes.Count(raw, []byte(`"success":true`)) == n && !bytes.Contains(raw, []byte(`"success":false`)) {
		return nil
	}
	var results []struct {
		Success bool   `json:"success"`
		Error   string `json:"error"`
	}
	if err := json.Unmarshal(raw, &results); err != nil {
		return fmt.Errorf("ack answer: %w", err)
	}
	for _, r := range results {
		if !r.Success {
			return fmt.Errorf("ack refused: %s", r.Error)
		}
	}
	if len(results) != n {
		return fmt.Errorf("ack answered %d results for %d messages", len(results), n)
	}
	return nil
}

// configure creates or updates a queue.
func (c *client) configure(ctx context.Context, queue string, options map[string]any) error {
	body, err := json.Marshal(map[string]any{"queue": queue, "options": options})
	if err != nil {
		return err
	}
	_, err = c.do(ctx, http.MethodPost, "/api/v1/configure", body, nil)
	return err
}

// commitGroups reads lethe's commit-group histogram
// (lethe_commit_group_partitions): the groups so far and the partitions
// they wrote.
func (c *client) commitGroups(ctx context.Context) (groups, partitions float64, err error) {
	var body []byte
	if _, err := c.do(ctx, http.MethodGet, "/metrics", nil, &body); err != nil {
		return 0, 0, fmt.Errorf("scrape commit groups: %w", err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "lethe_commit_group_partitions_count "); ok {
			groups, err = strconv.ParseFloat(v, 64)
		} else if v, ok := strings.CutPrefix(line, "lethe_commit_group_partitions_sum "); ok {
			partitions, err = strconv.ParseFloat(v, 64)
		}
		if err != nil {
			return 0, 0, fmt.Errorf("scrape commit groups: %q: %w", line, err)
		}
	}
	return groups, partitions, nil
}
