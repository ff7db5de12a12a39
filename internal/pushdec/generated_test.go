package pushdec

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestGeneratedBodiesMatchStdlib compares Decode with encoding/json on
// thousands of push-shaped bodies built from tricky pieces (folded and
// escaped keys, repeated keys, odd strings and numbers), some of them then
// damaged by a byte. Random bytes rarely reach this deep into the grammar,
// so this complements FuzzDecodeMatchesStdlib.
func TestGeneratedBodiesMatchStdlib(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		g := generator{rng: rng}
		g.request()
		body := []byte(g.b.String())
		if rng.IntN(4) == 0 {
			body = damage(rng, body)
		}
		requireSameAsStdlib(t, body)
	}
}

type generator struct {
	rng *rand.Rand
	b   strings.Builder
}

func (g *generator) pick(options ...string) string { return options[g.rng.IntN(len(options))] }

// invalid says whether to emit something encoding/json would reject, rarely
// enough that most bodies stay valid.
func (g *generator) invalid() bool { return g.rng.IntN(40) == 0 }

func (g *generator) space() {
	if g.rng.IntN(5) == 0 {
		g.b.WriteString(g.pick(" ", "\n", "\t", "\r\n  "))
	}
}

func (g *generator) request() {
	g.space()
	g.object(3, func() {
		key := g.pick(`"items"`, `"items"`, `"items"`, `"ITEMS"`, "\"item\u017f\"", `"\u0069tems"`, `"other"`, "\"\u0130tems\"")
		g.b.WriteString(key)
		g.space()
		g.b.WriteByte(':')
		g.space()
		switch {
		case strings.Contains(key, "other") || g.rng.IntN(10) == 0:
			g.value(3)
		case g.rng.IntN(10) == 0:
			g.b.WriteString("null")
		default:
			g.array(6, g.item)
		}
	})
	g.space()
}

func (g *generator) item() {
	switch g.rng.IntN(12) {
	case 0:
		g.b.WriteString("null")
		return
	case 1:
		g.value(2)
		return
	}
	g.object(6, func() {
		key := g.pick(`"queue"`, `"partition"`, `"payload"`, `"transactionId"`, `"traceId"`,
			`"QUEUE"`, `"Payload"`, "\"tran\u017factionid\"", `"\u0071ueue"`, `"extra"`, `"queue "`)
		g.b.WriteString(key)
		g.space()
		g.b.WriteByte(':')
		g.space()
		switch {
		case strings.Contains(strings.ToLower(key), "payload") || key == `"extra"`:
			g.value(4)
		case g.invalid():
			g.value(1)
		case g.rng.IntN(6) == 0:
			g.b.WriteString("null")
		default:
			g.str()
		}
	})
}

func (g *generator) object(maxMembers int, member func()) {
	g.b.WriteByte('{')
	g.space()
	for i := range g.rng.IntN(maxMembers + 1) {
		if i > 0 {
			g.b.WriteByte(',')
			g.space()
		}
		member()
		g.space()
	}
	g.b.WriteByte('}')
}

func (g *generator) array(maxElems int, elem func()) {
	g.b.WriteByte('[')
	g.space()
	for i := range g.rng.IntN(maxElems + 1) {
		if i > 0 {
			g.b.WriteByte(',')
			g.space()
		}
		elem()
		g.space()
	}
	g.b.WriteByte(']')
}

func (g *generator) value(depth int) {
	n := 6
	if depth <= 0 {
		n = 4
	}
	switch g.rng.IntN(n) {
	case 0:
		g.str()
	case 1:
		if g.invalid() {
			g.b.WriteString(g.pick("01", "1.", ".5", "-", "+1", "1e", "0x1", "nul", "True", `[1,]`, `{"a":1,}`, `{"a"}`))
			return
		}
		if g.invalid() { // well-formed, but not storable
			g.b.WriteString(g.pick("1e400", "-1e-400", "1e99999", "0e-20000"))
			return
		}
		g.b.WriteString(g.pick("0", "-0", "1", "-12.5", "1e308", "1E-2", "0.0e+0", "123456789012345678901234567890"))
	case 2:
		g.b.WriteString(g.pick("true", "false", "null"))
	case 3:
		g.b.WriteString(g.pick(`{}`, `[]`, ` [ ] `, `{ }`))
	case 4:
		g.object(3, func() {
			g.str()
			g.space()
			g.b.WriteByte(':')
			g.space()
			g.value(depth - 1)
		})
	case 5:
		g.array(3, func() { g.value(depth - 1) })
	}
}

func (g *generator) str() {
	g.b.WriteByte('"')
	for range g.rng.IntN(5) {
		if g.invalid() {
			g.b.WriteString(g.pick("\x1f", `\x`, `\u12`, "\n"))
			continue
		}
		if g.invalid() { // well-formed, but not storable
			g.b.WriteString(g.pick(`\ud800`, `\udc00`, `\ud800\ud800`, "\xff", "\xed\xa0\x80", "\xc3", `\u0000`, `\ud800\u0041`))
			continue
		}
		g.b.WriteString(g.pick("q", "orders", "é", "😀", `\"`, `\\`, `\/`, `\b\f\n\r\t`, `\u00e9`, `\ud83d\ude00`,
			"\u212a", `\uDBFF\uDFFF`, `\u0001`, "\u0085", `\\u0000`))
	}
	g.b.WriteByte('"')
}

// damage deletes, inserts or replaces one byte, or cuts the body short.
func damage(rng *rand.Rand, body []byte) []byte {
	if len(body) == 0 {
		return body
	}
	i := rng.IntN(len(body))
	const pieces = "{}[],:\" \\0123456789-+.eEtfnul\x00\x7f\xff"
	c := pieces[rng.IntN(len(pieces))]
	switch rng.IntN(4) {
	case 0:
		return append(body[:i:i], body[i+1:]...)
	case 1:
		return append(append(body[:i:i], c), body[i:]...)
	case 2:
		body[i] = c
		return body
	}
	return body[:i]
}
