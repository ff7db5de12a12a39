package httpapi

import (
	"net/http"
	"strconv"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/streams"
)

// The streams API (Queen's /streams/v1), served by package streams.

func (s *Server) streamsService() error {
	if s.streams == nil {
		return apierr.New(apierr.NotFound, "the streams API is not served by this replica")
	}
	return nil
}

// registerQueryDocRole is the streams registration's role in docs/api.md.
const registerQueryDocRole = "write; operator to reset"

// registerStreamQuery registers a streaming query: 200 with its query_id,
// 409 when its config_hash changed and reset is not set, 403 when reset
// is set and the caller lacks the operator role (a reset drops the
// query's state, as the operator's DELETE does).
func (s *Server) registerStreamQuery(w http.ResponseWriter, r *http.Request) error {
	if err := s.streamsService(); err != nil {
		return err
	}
	var req api.StreamQueryRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	out, err := s.streams.Register(r.Context(), req, s.resetGuard(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// resetGuard lets only the operator reset a registration: a new
// config_hash with reset true drops the query's state. Registering a new
// name, or the same config_hash again, needs only the write role.
func (s *Server) resetGuard(r *http.Request) streams.ResetGuard {
	if s.auth.IsOperator(r) {
		return nil
	}
	return func(name string) error {
		return s.auth.OperatorNeeded("resetting streaming query " + strconv.Quote(name) +
			" (a new config_hash with reset: true) drops its state")
	}
}

// removeStreamQuery retires a streaming query; the retention loop purges
// its state.
func (s *Server) removeStreamQuery(w http.ResponseWriter, r *http.Request) error {
	if err := s.streamsService(); err != nil {
		return err
	}
	out, err := s.streams.Remove(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// streamCycle commits a cycle: 200 with success true, or success false and
// the reason when it rolled back (Queen's contract: the SDK reads success).
// Its pushes carry the caller's JWT subject as producerSub, as a push does.
func (s *Server) streamCycle(w http.ResponseWriter, r *http.Request) error {
	if err := s.streamsService(); err != nil {
		return err
	}
	var req api.StreamCycleRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if len(req.PushItems) > 0 {
		if err := s.refuseWhilePushesBuffer("a streams cycle that pushes"); err != nil {
			return err
		}
	}
	sub, err := producerSub(r)
	if err != nil {
		return err
	}
	out, err := s.streams.Cycle(r.Context(), req, sub)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// streamState reads a partition's state of a query.
func (s *Server) streamState(w http.ResponseWriter, r *http.Request) error {
	if err := s.streamsService(); err != nil {
		return err
	}
	var req api.StreamStateRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	out, err := s.streams.State(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
