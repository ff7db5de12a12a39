package httpapi

import (
	"errors"
	"net/http"
	"strings"

	"github.com/lethe-mq/lethe/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/engine"
)

// configureDocRole is configure's role in docs/api.md.
const configureDocRole = "write; operator to delete or skip more"

// mayConfigure lets the plain token configure a queue unless the change
// lets a deleting rule delete more or sooner, compared with the queue's
// current options (a new queue's are the defaults, which delete nothing).
func (s *Server) mayConfigure(r *http.Request, req api.ConfigureRequest) error {
	if s.auth.IsOperator(r) {
		return nil
	}
	cur := api.DefaultQueueOptions()
	q, err := s.eng.GetQueue(r.Context(), req.Queue)
	switch {
	case err == nil:
		cur = q.Options
	case !errors.Is(err, apierr.NotFound):
		return err
	}
	next, err := engine.ParseQueueOptions(req.Options, cur)
	if err != nil {
		return err
	}
	if changes := deletingChanges(cur, next); len(changes) > 0 {
		return s.auth.OperatorNeeded("this configure " + strings.Join(changes, ", ") + ", which lets retention delete data or skips messages")
	}
	return nil
}

// deletingChanges lists what going from cur to next does to the rules that
// delete or skip messages: retention turned on, a retention window or the
// ttl (past which messages are never delivered) set or shortened, or any
// change of maxWaitTimeSeconds (which evicts unread messages).
func deletingChanges(cur, next api.QueueOptions) []string {
	var out []string
	if next.RetentionEnabled && !cur.RetentionEnabled {
		out = append(out, "turns retentionEnabled on")
	}
	if shortens(cur.RetentionSeconds, next.RetentionSeconds) {
		out = append(out, "sets or lowers retentionSeconds")
	}
	if shortens(cur.CompletedRetentionSeconds, next.CompletedRetentionSeconds) {
		out = append(out, "sets or lowers completedRetentionSeconds")
	}
	if shortens(cur.TTL, next.TTL) {
		out = append(out, "sets or lowers ttl")
	}
	if next.MaxWaitTimeSeconds != cur.MaxWaitTimeSeconds {
		out = append(out, "changes maxWaitTimeSeconds")
	}
	return out
}

// shortens tells whether a window in seconds, where 0 is off, goes from off
// to on or becomes shorter.
func shortens(cur, next int) bool { return next > 0 && (cur == 0 || next < cur) }
