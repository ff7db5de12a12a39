package pushdec

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestGeneratedAckBodiesMatchStdlib compares DecodeAckBatch with
// encoding/json on thousands of ack-batch-shaped bodies, some of them then
// damaged by a byte, as TestGeneratedBodiesMatchStdlib does for push.
func TestGeneratedAckBodiesMatchStdlib(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	for range 10000 {
		g := generator{rng: rng}
		g.ackBatch()
		body := []byte(g.b.String())
		if rng.IntN(4) == 0 {
			body = damage(rng, body)
		}
		requireAckSameAsStdlib(t, body)
	}
}

func (g *generator) ackBatch() {
	g.space()
	g.b.WriteByte('{') // at least one member: an empty body teaches little
	g.space()
	for i := range 1 + g.rng.IntN(3) {
		if i > 0 {
			g.b.WriteByte(',')
			g.space()
		}
		key := g.pick(`"acknowledgments"`, `"acknowledgments"`, `"acknowledgments"`, `"acknowledgments"`,
			`"acknowledgments"`, `"acknowledgments"`, `"consumerGroup"`, `"consumerGroup"`,
			`"ACKNOWLEDGMENTS"`, "\"ackno\u212aledgments\"", `"\u0061cknowledgments"`, `"ConsumerGroup"`, `"other"`,
			"\"\u0130cknowledgments\"")
		g.b.WriteString(key)
		g.space()
		g.b.WriteByte(':')
		g.space()
		switch {
		case strings.Contains(key, "other"):
			g.value(3)
		case strings.Contains(strings.ToLower(key), "group"):
			g.stringValue()
		case g.rng.IntN(15) == 0:
			g.value(3)
		case g.rng.IntN(15) == 0: //nolint:gocritic // dupCase: a second draw, not the same case
			g.b.WriteString("null")
		default:
			g.array(6, g.ack)
		}
		g.space()
	}
	g.b.WriteByte('}')
	g.space()
}

func (g *generator) ack() {
	switch g.rng.IntN(30) {
	case 0:
		g.b.WriteString("null")
		return
	case 1:
		g.value(2)
		return
	}
	g.object(7, func() {
		key := g.pick(`"transactionId"`, `"partitionId"`, `"leaseId"`, `"status"`, `"consumerGroup"`, `"error"`,
			`"TRANSACTIONID"`, `"PartitionID"`, "\"tran\u017factionid\"", `"\u006ceaseId"`, `"retries"`, `"status "`)
		g.b.WriteString(key)
		g.space()
		g.b.WriteByte(':')
		g.space()
		if key == `"retries"` {
			g.value(3)
			return
		}
		g.stringValue()
	})
}

// stringValue writes what a string field mostly holds: an id or status
// (repeated, as in the acks of a pop), sometimes an odd string (which is
// rarely not storable or not JSON) or null, rarely a value of another type.
func (g *generator) stringValue() {
	switch n := g.rng.IntN(12); {
	case g.invalid():
		g.value(1)
	case n < 2:
		g.b.WriteString("null")
	case n < 6:
		g.str()
	default:
		g.b.WriteString(g.pick(`"completed"`, `"failed"`, `"0195f6c2-7d1e-7a3b-9c4d-000000000001"`,
			`"0195f6c2-7d1e-7a3b-9c4d-000000000002"`, `"g"`, `""`))
	}
}
