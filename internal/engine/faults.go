package engine

import (
	"errors"

	"github.com/lethe-mq/lethe/internal/store"
)

// errCorruptState marks stored consumer state of a partition that cannot be
// used (a cursor whose lease arrays disagree, say).
var errCorruptState = errors.New("stored state is inconsistent")

// partitionFault tells whether err is about what one partition stores
// (data PostgreSQL refuses or cannot read, a damaged frame, inconsistent
// state) rather than about the database or the request. Such an error
// skips that partition, logged and counted, and the others are served; any
// other error (connection lost, timeout, cancellation) fails the request,
// since it would fail every partition alike.
func partitionFault(err error) bool {
	return errors.Is(err, errCorruptState) || store.DataFault(err)
}
