package validate

import (
	"fmt"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
)

// PushLimits are the configured bounds of one push.
type PushLimits struct {
	MaxItems        int // items in one request (PushItemsMax unless a test sets it)
	MaxPayloadBytes int // MAX_PAYLOAD_BYTES
}

// PushItems checks a push before anything is written: the number of items,
// every name and id, and every payload (size, and unless payloadsChecked,
// that it is JSON PostgreSQL can store). A missing payload is allowed: it is
// stored as null, as Queen does; so are no items at all (Queen answers an
// empty push with 201 and []). Field names in errors are formatted only for
// the item at fault.
func PushItems(items []api.PushItem, lim PushLimits, payloadsChecked bool) error {
	if err := List("items", len(items), lim.MaxItems); err != nil {
		return err
	}
	for i := range items {
		if err := pushItem(i, &items[i], lim, payloadsChecked); err != nil {
			return err
		}
	}
	return nil
}

func pushItem(i int, it *api.PushItem, lim PushLimits, payloadsChecked bool) error {
	field := func(name string) string { return fmt.Sprintf("items[%d].%s", i, name) }
	if it.Queue == "" {
		return apierr.Field(apierr.Invalid, field("queue"), "%s is required", field("queue"))
	}
	names := [...]struct {
		name, v string
		limit   int
	}{
		{"queue", it.Queue, NameMaxBytes},
		{"partition", it.Partition, NameMaxBytes},
		{"transactionId", it.TransactionID, IDMaxBytes},
		{"traceId", it.TraceID, IDMaxBytes},
	}
	for _, n := range names {
		if p := nameProblem(n.v, n.limit); p != "" {
			return problemError(field(n.name), n.v, p, n.limit)
		}
	}
	if len(it.Payload) > lim.MaxPayloadBytes {
		return apierr.Field(apierr.TooLarge, field("payload"), "%s is %d bytes; the limit is %d (MAX_PAYLOAD_BYTES)",
			field("payload"), len(it.Payload), lim.MaxPayloadBytes)
	}
	if !payloadsChecked && len(it.Payload) > 0 {
		return Payload(field("payload"), it.Payload)
	}
	return nil
}
