package validate

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
)

func TestPushItems(t *testing.T) {
	t.Parallel()
	lim := PushLimits{MaxItems: 3, MaxPayloadBytes: 16}
	good := api.PushItem{Queue: "q", Payload: json.RawMessage(`{"a":1}`)}
	for _, c := range []struct {
		name  string
		items []api.PushItem
		kind  apierr.Kind
		field string
	}{
		{"too many", []api.PushItem{good, good, good, good}, apierr.Invalid, "items"},
		{"no queue", []api.PushItem{good, {Payload: json.RawMessage(`1`)}}, apierr.Invalid, "items[1].queue"},
		{"blank queue", []api.PushItem{{Queue: "  "}}, apierr.Invalid, "items[0].queue"},
		{"bidi partition", []api.PushItem{{Queue: "q", Partition: "p\u202e"}}, apierr.Invalid, "items[0].partition"},
		{"NUL transaction id", []api.PushItem{{Queue: "q", TransactionID: "t\x00"}}, apierr.Invalid, "items[0].transactionId"},
		{"long trace id", []api.PushItem{{Queue: "q", TraceID: strings.Repeat("t", 513)}}, apierr.Invalid, "items[0].traceId"},
		{"big payload", []api.PushItem{{Queue: "q", Payload: json.RawMessage(`"` + strings.Repeat("x", 20) + `"`)}}, apierr.TooLarge, "items[0].payload"},
		{"bad payload", []api.PushItem{{Queue: "q", Payload: json.RawMessage(`{`)}}, apierr.Invalid, "items[0].payload"},
		{"NUL payload", []api.PushItem{{Queue: "q", Payload: json.RawMessage(`"\u0000"`)}}, apierr.Invalid, "items[0].payload"},
	} {
		err := PushItems(c.items, lim, false)
		if !errors.Is(err, c.kind) || apierr.FieldOf(err) != c.field {
			t.Errorf("%s: PushItems = %v (field %q), want %v naming %q", c.name, err, apierr.FieldOf(err), c.kind, c.field)
		}
	}
	if err := PushItems(nil, lim, false); err != nil {
		t.Errorf("no items (Queen's empty push, 201 []): %v", err)
	}
	if err := PushItems([]api.PushItem{good, {Queue: "q"}}, lim, false); err != nil {
		t.Errorf("good items (one without payload, stored as null): %v", err)
	}
	// Checked payloads are not scanned again, only measured.
	if err := PushItems([]api.PushItem{{Queue: "q", Payload: json.RawMessage(`{`)}}, lim, true); err != nil {
		t.Errorf("payloadsChecked: %v", err)
	}
}
