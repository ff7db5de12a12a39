package httpapi

import (
	"net/http"
	"strconv"

	"github.com/lethe-mq/lethe/internal/validate"
)

// Edge checks of names and ids in bodies and paths, by the rules of
// package validate; field is how the request spells the value.

func validateName(field, v string) error { return validate.OptionalName(field, v) }

func validateID(field, v string) error { return validate.ID(field, v) }

// pathID reads a required id from the path.
func pathID(r *http.Request, key string) (string, error) {
	v := r.PathValue(key)
	return v, validate.RequiredID(key, v)
}

// checkAck checks the names and ids of one ack; prefix locates it in the
// body ("acknowledgments[2]."). A missing id is the engine's to answer (an
// ack of a batch fails alone, with success false).
func checkAck(prefix, transactionID, partitionID, leaseID, group string) error {
	if err := validate.ID(prefix+"transactionId", transactionID); err != nil {
		return err
	}
	if err := validate.ID(prefix+"partitionId", partitionID); err != nil {
		return err
	}
	if err := validate.ID(prefix+"leaseId", leaseID); err != nil {
		return err
	}
	return validate.OptionalName(prefix+"consumerGroup", group)
}

// indexed spells element i of list as a field prefix: "operations[3].".
func indexed(list string, i int) string { return list + "[" + strconv.Itoa(i) + "]." }
