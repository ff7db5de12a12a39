package httpapi

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/lethe-mq/lethe/internal/apierr"
)

// longPollRetryAfter is how soon a long poll refused at the bound may try
// again: waiters leave as their timeouts end or messages arrive.
const longPollRetryAfter = time.Second

// pollGate bounds the long polls waiting at once on this replica. Each costs
// a goroutine, a connection's buffers and a re-poll of the database every
// second.
type pollGate struct {
	max int64
	n   atomic.Int64
}

// enter admits one long poll, or refuses at the bound; an admitted poll
// must call leave.
func (g *pollGate) enter() error {
	if g.n.Add(1) > g.max {
		g.n.Add(-1)
		return &apierr.Error{Kind: apierr.Unavailable, RetryAfter: longPollRetryAfter,
			Msg: "this replica already holds its limit of waiting long polls (LETHE_MAX_LONG_POLLS); retry, or pop without wait"}
	}
	return nil
}

func (g *pollGate) leave() { g.n.Add(-1) }

// extendWriteDeadline lets an answer that may wait up to wait still be
// written: the server's write timeout counts from the request's start.
func (s *Server) extendWriteDeadline(w http.ResponseWriter, wait time.Duration) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wait + s.timeouts.Write))
}
