package httpapi

import (
	"net/http"
	"strconv"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
)

// Message traces (Queen's /api/v1/traces), served by package traces.

func (s *Server) tracesService() error {
	if s.traces == nil {
		return apierr.New(apierr.NotFound, "traces are not served by this replica")
	}
	return nil
}

// recordTrace records a trace of a message: 201 with its id.
func (s *Server) recordTrace(w http.ResponseWriter, r *http.Request) error {
	if err := s.tracesService(); err != nil {
		return err
	}
	var req api.TraceRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	out, err := s.traces.Record(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) messageTraces(w http.ResponseWriter, r *http.Request) error {
	if err := s.tracesService(); err != nil {
		return err
	}
	out, err := s.traces.ForMessage(r.Context(), r.PathValue("partitionId"), r.PathValue("transactionId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) tracesByName(w http.ResponseWriter, r *http.Request) error {
	if err := s.tracesService(); err != nil {
		return err
	}
	page, err := tracePage(r, 100)
	if err != nil {
		return err
	}
	out, err := s.traces.ByName(r.Context(), r.PathValue("traceName"), page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) traceNames(w http.ResponseWriter, r *http.Request) error {
	if err := s.tracesService(); err != nil {
		return err
	}
	page, err := tracePage(r, 50)
	if err != nil {
		return err
	}
	out, err := s.traces.Names(r.Context(), page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// tracePage reads limit (Queen's default def) and offset.
func tracePage(r *http.Request, def int) (api.Pagination, error) {
	q, err := query(r)
	if err != nil {
		return api.Pagination{}, err
	}
	if q.Get("limit") == "" {
		q.Set("limit", strconv.Itoa(def))
	}
	p, err := pageParams(q)
	return api.Pagination{Limit: p.Limit, Offset: p.Offset}, err
}
