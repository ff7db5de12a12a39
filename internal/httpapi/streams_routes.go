package httpapi

import (
	"net/http"

	"github.com/lethe-mq/lethe/api"
	"github.com/lethe-mq/lethe/internal/apierr"
)

// The streams API (Queen's /streams/v1), served by package streams.

func (s *Server) streamsService() error {
	if s.streams == nil {
		return apierr.New(apierr.NotFound, "the streams API is not served by this replica")
	}
	return nil
}

// registerStreamQuery registers a streaming query: 200 with its query_id,
// 409 when its config_hash changed and reset is not set.
func (s *Server) registerStreamQuery(w http.ResponseWriter, r *http.Request) error {
	if err := s.streamsService(); err != nil {
		return err
	}
	var req api.StreamQueryRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	out, err := s.streams.Register(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
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
