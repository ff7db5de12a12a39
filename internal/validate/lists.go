package validate

import "github.com/lethe-mq/lethe/internal/apierr"

// The bounds on the lists a request body may hold, each written once here
// (docs/api.md's Input rules lists them). A list past its bound answers
// 400 naming the field and the bound, before anything is written.
const (
	// PushItemsMax bounds the items of one push, the items of one
	// transaction's pushes together, and a streams cycle's push_items.
	PushItemsMax = 10_000
	// AckBatchMax bounds the acknowledgments of one ack batch.
	AckBatchMax = 10_000
	// TransactionOperationsMax bounds a transaction's operations, and
	// TransactionLeasesMax its requiredLeases.
	TransactionOperationsMax = 10_000
	TransactionLeasesMax     = 10_000
	// RequiredGroupsMax bounds a queue's requiredGroups: every retention
	// decision of the queue checks each of them.
	RequiredGroupsMax = 64
	// StateOpsMax bounds a streams cycle's state_ops, and StateKeysMax the
	// keys one state read names.
	StateOpsMax  = 10_000
	StateKeysMax = 10_000
	// TraceNamesMax bounds the names of one trace.
	TraceNamesMax = 100
)

// List refuses a list of n entries when n is past limit, naming field and
// the bound.
func List(field string, n, limit int) error {
	if n > limit {
		return apierr.Field(apierr.Invalid, field, "%s holds %d entries; at most %d are accepted", field, n, limit)
	}
	return nil
}
