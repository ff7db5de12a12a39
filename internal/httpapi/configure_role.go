package httpapi

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/queueopts"
	"github.com/lethe-mq/lethe/internal/tier"
)

// configureDocRole is configure's role in docs/api.md.
const configureDocRole = "write; operator to delete or skip more"

// mayConfigure lets the plain token configure a queue unless the change
// lets a deleting rule delete more or sooner, compared with the queue's
// current options (a new queue's are the server's defaults). A shorter
// retentionTier of an existing queue is let through: where the queue holds
// data it waits for the operator's confirm, and where it holds none the
// configure asks shortenGuard before applying it.
func (s *Server) mayConfigure(r *http.Request, req api.ConfigureRequest) error {
	if s.auth.IsOperator(r) {
		return nil
	}
	cur := s.queues.Defaults()
	exists := false
	q, err := s.queues.Get(r.Context(), req.Queue)
	switch {
	case err == nil:
		cur, exists = q.Options, true
	case !errors.Is(err, apierr.NotFound):
		return err
	}
	next, err := queueopts.Parse(req.Options, cur)
	if err != nil {
		return err
	}
	changes := deletingChanges(cur, next)
	if !exists && tier.Tier(next.RetentionTier).Shorter(tier.Tier(cur.RetentionTier)) {
		changes = append(changes, "sets a retentionTier shorter than the server's default ("+cur.RetentionTier+")")
	}
	if len(changes) > 0 {
		return s.auth.OperatorNeeded("this configure " + strings.Join(changes, ", ") + ", which lets retention delete data or skips messages")
	}
	return nil
}

// shortenGuard is the configure's guard for a configure without the operator
// token: a shorter retentionTier that would apply at once (no data to
// confirm a change for) needs the operator, as a shorter window does.
func (s *Server) shortenGuard(r *http.Request) queueopts.ShortenGuard {
	if s.auth.IsOperator(r) {
		return nil
	}
	return func(queue, from, to string) error {
		return s.auth.OperatorNeeded("this configure shortens retentionTier of " + queue + " from " + from + " to " + to +
			", which applies at once (the queue holds nothing to confirm a change for) and lets retention delete data")
	}
}

// deletingChanges lists what going from cur to next does to the rules that
// delete or skip messages: retention turned on, a retention window or the
// ttl (past which messages are never delivered) set or shortened, any
// change of maxWaitTimeSeconds (which evicts unread messages), dead
// letters let go with their partition (quarantined: purge) or a required
// group no longer owed the queue's data.
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
	if next.Quarantined == string(tier.Purge) && cur.Quarantined != string(tier.Purge) {
		out = append(out, "sets quarantined to purge")
	}
	for _, g := range cur.RequiredGroups {
		if !slices.Contains(next.RequiredGroups, g) {
			out = append(out, "removes required group "+g)
		}
	}
	return out
}

// shortens tells whether a window in seconds, where 0 is off, goes from off
// to on or becomes shorter.
func shortens(cur, next int) bool { return next > 0 && (cur == 0 || next < cur) }
