package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/pushbuffer"
)

// Maintenance is maintenance mode as the handlers use it (package
// pushbuffer's Service).
type Maintenance interface {
	// State is the replica's view of the switches, as of the last poll.
	State() pushbuffer.State
	// Buffer stores items durably and answers them as buffered.
	Buffer(ctx context.Context, items []api.PushItem) ([]api.PushResult, error)
	// Refresh reads the switches from the database now.
	Refresh(ctx context.Context) error
	// SetPush and SetPop turn a switch on or off for every replica.
	SetPush(ctx context.Context, enabled bool) error
	SetPop(ctx context.Context, enabled bool) error
}

// maintenanceTimeout bounds the database work of one maintenance call.
const maintenanceTimeout = 5 * time.Second

var errNoMaintenance = apierr.New(apierr.NotFound, "this server has no maintenance mode")

func pushMaintenance(st pushbuffer.State) api.PushMaintenance {
	return api.PushMaintenance{Enabled: st.Push, MaintenanceMode: st.Push, BufferedMessages: st.Buffered, BufferHealthy: st.Healthy}
}

func popMaintenance(st pushbuffer.State) api.PopMaintenance {
	return api.PopMaintenance{Enabled: st.Pop, PopMaintenanceMode: st.Pop}
}

// GETs read the database, so any replica answers the shared state at once
// (and adopts it) rather than its up-to-a-second-old copy.
func (s *Server) getPushMaintenance(w http.ResponseWriter, r *http.Request) error {
	return s.maintenanceState(w, r, nil, func(st pushbuffer.State) any { return pushMaintenance(st) })
}

func (s *Server) getPopMaintenance(w http.ResponseWriter, r *http.Request) error {
	return s.maintenanceState(w, r, nil, func(st pushbuffer.State) any { return popMaintenance(st) })
}

func (s *Server) setPushMaintenance(w http.ResponseWriter, r *http.Request) error {
	if s.maint == nil {
		return errNoMaintenance
	}
	return s.maintenanceState(w, r, s.maint.SetPush, func(st pushbuffer.State) any { return pushMaintenance(st) })
}

func (s *Server) setPopMaintenance(w http.ResponseWriter, r *http.Request) error {
	if s.maint == nil {
		return errNoMaintenance
	}
	return s.maintenanceState(w, r, s.maint.SetPop, func(st pushbuffer.State) any { return popMaintenance(st) })
}

// maintenanceState applies {"enabled": bool} with set (nil: a GET, which
// reads the switches instead) and answers the state as view shows it.
func (s *Server) maintenanceState(w http.ResponseWriter, r *http.Request, set func(context.Context, bool) error,
	view func(pushbuffer.State) any) error {
	if s.maint == nil {
		return errNoMaintenance
	}
	const hint = `send a JSON body {"enabled": true} or {"enabled": false}`
	var req api.MaintenanceSwitch
	if set != nil {
		if err := s.decode(w, r, &req); err != nil {
			return withHint(err, "enabled", hint)
		}
		if req.Enabled == nil {
			return apierr.Field(apierr.Invalid, "enabled", `"enabled" is missing; `+hint)
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), maintenanceTimeout)
	defer cancel()
	var err error
	if set != nil {
		err = set(ctx, *req.Enabled)
	} else {
		err = s.maint.Refresh(ctx)
	}
	if err != nil {
		return err
	}
	if set != nil {
		s.log.Info("maintenance switch set", "request_id", requestID(r), "path", r.URL.Path, "enabled", *req.Enabled)
	}
	writeJSON(w, http.StatusOK, view(s.maint.State()))
	return nil
}

// withHint adds what to send to a 400 about a body.
func withHint(err error, field, hint string) error {
	var e *apierr.Error
	if errors.As(err, &e) && e.Kind == apierr.Invalid {
		return apierr.Field(apierr.Invalid, field, "%s; %s", e.Msg, hint)
	}
	return err
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	if s.metrics == nil {
		return apierr.New(apierr.NotFound, "this server exposes no metrics")
	}
	s.metrics.ServeHTTP(w, r)
	return nil
}

// pushMaintenanceRetryAfter is the Retry-After of work refused while push
// maintenance is on: about how often replicas read the switches.
const pushMaintenanceRetryAfter = 5 * time.Second

// refuseWhilePushesBuffer refuses, while push maintenance is on, work whose
// pushes commit together with other writes (a transaction's acks, a
// streams cycle's state and ack, a dead letter's removal on replay): only
// a plain push can go to the buffer alone, so these answer 503 and write
// nothing until maintenance ends.
func (s *Server) refuseWhilePushesBuffer(what string) error {
	if s.maint == nil || !s.maint.State().Push {
		return nil
	}
	return &apierr.Error{Kind: apierr.Unavailable, RetryAfter: pushMaintenanceRetryAfter,
		Msg: what + " is refused while push maintenance is on: its pushes commit together with its other writes, so they cannot " +
			"go to the maintenance buffer alone; retry once push maintenance is off (GET /api/v1/system/maintenance)"}
}
