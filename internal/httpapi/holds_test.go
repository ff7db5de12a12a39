package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/config"
)

// Holds over HTTP: placing and releasing need the operator, listing the
// read role; the hold names who placed and released it; a held queue
// cannot be deleted (409 naming the hold) until it is released.
func TestRetentionHoldsOverHTTP(t *testing.T) {
	c := setupAdmin(t, func(cfg *config.Server) {
		cfg.AuthToken, cfg.OperatorToken = "user-token", "operator-token"
	})
	c.token = "operator-token"
	c.push("q", "p", "", map[string]int{"n": 1})

	c.token = "user-token"
	c.fails("POST", "/api/v1/retention/holds", `{"queue":"q","reason":"audit"}`, http.StatusForbidden)
	c.token = "operator-token"
	var h api.RetentionHold
	c.call("POST", "/api/v1/retention/holds", `{"queue":"q","reason":"  audit 2031  "}`, http.StatusCreated, &h)
	if !h.Active || h.Queue != "q" || h.Reason != "audit 2031" || h.PlacedBy != "operator" || !h.PlacedAt.Equal(adminT0) {
		t.Fatalf("placed hold = %+v", h)
	}

	msg := c.fails("DELETE", "/api/v1/resources/queues/q", nil, http.StatusConflict)
	if !strings.Contains(msg, fmt.Sprintf("retention hold [%d]", h.ID)) {
		t.Fatalf("deleting the held queue says %q, want it to name hold %d", msg, h.ID)
	}
	c.token = "user-token"
	var list struct{ Holds []api.RetentionHold }
	c.call("GET", "/api/v1/retention/holds?queue=q", nil, http.StatusOK, &list)
	if len(list.Holds) != 1 || list.Holds[0].ID != h.ID {
		t.Fatalf("holds of q = %+v, want the one placed", list.Holds)
	}
	c.fails("DELETE", fmt.Sprintf("/api/v1/retention/holds/%d", h.ID), nil, http.StatusForbidden)

	c.token = "operator-token"
	var released api.RetentionHold
	c.call("DELETE", fmt.Sprintf("/api/v1/retention/holds/%d", h.ID), nil, http.StatusOK, &released)
	if released.Active || released.ReleasedBy == nil || *released.ReleasedBy != "operator" || released.ReleasedAt == nil {
		t.Fatalf("released hold = %+v", released)
	}
	c.fails("DELETE", fmt.Sprintf("/api/v1/retention/holds/%d", h.ID), nil, http.StatusConflict)
	c.call("GET", "/api/v1/retention/holds", nil, http.StatusOK, &list)
	if len(list.Holds) != 0 {
		t.Fatalf("active holds after the release = %+v, want none", list.Holds)
	}
	c.call("GET", "/api/v1/retention/holds?released=true", nil, http.StatusOK, &list)
	if len(list.Holds) != 1 || list.Holds[0].Active {
		t.Fatalf("all holds = %+v, want the released one", list.Holds)
	}
	c.call("DELETE", "/api/v1/resources/queues/q", nil, http.StatusOK, nil)
}
