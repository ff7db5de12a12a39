package pushdec

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
)

func TestDecodeValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want api.PushRequest
	}{
		{
			name: "all fields",
			body: `{"items":[{"queue":"q","partition":"p","payload":{"a": [1, "x"]},"transactionId":"t","traceId":"r"}]}`,
			want: api.PushRequest{Items: []api.PushItem{{Queue: "q", Partition: "p", Payload: json.RawMessage(`{"a": [1, "x"]}`), TransactionID: "t", TraceID: "r"}}},
		},
		{
			name: "payload keeps its exact bytes, without surrounding space",
			body: "{\"items\":[{\"payload\" :\n 1.5e+3 \t}]}",
			want: api.PushRequest{Items: []api.PushItem{{Payload: json.RawMessage(`1.5e+3`)}}},
		},
		{
			name: "null payload is the bytes null, a missing one is nil",
			body: `{"items":[{"payload":null},{"queue":"q"}]}`,
			want: api.PushRequest{Items: []api.PushItem{{Payload: json.RawMessage(`null`)}, {Queue: "q"}}},
		},
		{
			name: "escapes and surrogate pairs",
			body: `{"items":[{"queue":"a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}]}`,
			want: api.PushRequest{Items: []api.PushItem{{Queue: "a\"\\/\b\f\n\r\té😀"}}},
		},
		{
			name: "a surrogate pair is one rune, any case",
			body: `{"items":[{"queue":"\uD800\uDC00x\udbff\udfff"}]}`,
			want: api.PushRequest{Items: []api.PushItem{{Queue: "\U00010000x\U0010FFFF"}}},
		},
		{
			name: "numbers within float64 and \\u0000 spelled out are stored",
			body: `{"items":[{"queue":"\\u0000","payload":[1e308,-5e-324,0e-9999,1.5E+3]}]}`,
			want: api.PushRequest{Items: []api.PushItem{{Queue: `\u0000`, Payload: json.RawMessage(`[1e308,-5e-324,0e-9999,1.5E+3]`)}}},
		},
		{
			name: "keys match case-insensitively, with encoding/json's folding",
			body: "{\"ITEM\u017f\":[{\"Queue\":\"q\",\"tran\u017factionid\":\"t\",\"\\u0070ayload\":2}]}",
			want: api.PushRequest{Items: []api.PushItem{{Queue: "q", TransactionID: "t", Payload: json.RawMessage(`2`)}}},
		},
		{
			name: "dotted and dotless i do not fold to i",
			body: "{\"\u0130tems\":[{}],\"\u0131tems\":[{}]}",
			want: api.PushRequest{},
		},
		{
			name: "last duplicate wins, null keeps the earlier string",
			body: `{"items":[{"queue":"a","queue":"b","traceId":"t","traceId":null}]}`,
			want: api.PushRequest{Items: []api.PushItem{{Queue: "b", TraceID: "t"}}},
		},
		{
			name: "repeated items merge into the earlier elements",
			body: `{"items":[{"queue":"a","traceId":"t"},{"queue":"b"}],"items":[{"queue":"c"}],"items":[null,{}]}`,
			want: api.PushRequest{Items: []api.PushItem{{Queue: "c", TraceID: "t"}, {Queue: "b"}}},
		},
		{
			name: "empty items is empty, not nil",
			body: `{"items":[]}`,
			want: api.PushRequest{Items: []api.PushItem{}},
		},
		{
			name: "null items is nil",
			body: `{"items":[{}],"items":null}`,
			want: api.PushRequest{},
		},
		{
			name: "unknown keys are skipped",
			body: `{"x":{"items":[{"queue":"no"}]},"items":[{"queue":"yes","extra":[{"queue":"no"}]}]}`,
			want: api.PushRequest{Items: []api.PushItem{{Queue: "yes"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			requireSameAsStdlib(t, []byte(tt.body))
			got, err := Decode([]byte(tt.body))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !equalRequests(got, tt.want) {
				t.Fatalf("Decode\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func equalRequests(a, b api.PushRequest) bool {
	if (a.Items == nil) != (b.Items == nil) || len(a.Items) != len(b.Items) {
		return false
	}
	for i := range a.Items {
		x, y := a.Items[i], b.Items[i]
		if x.Queue != y.Queue || x.Partition != y.Partition || x.TransactionID != y.TransactionID ||
			x.TraceID != y.TraceID || string(x.Payload) != string(y.Payload) || (x.Payload == nil) != (y.Payload == nil) {
			return false
		}
	}
	return true
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body string
		want string
	}{
		{``, `malformed JSON at byte 0: unexpected end of input`},
		{`null`, `push body must be a JSON object, got null (at byte 0)`},
		{` [1]`, `push body must be a JSON object, got array (at byte 1)`},
		{`{"items":{}}`, `items must be an array of items, got object (at byte 9)`},
		{`{"items":[{"queue":"q"},7]}`, `items[1] must be an object, got number (at byte 24)`},
		{`{"items":[{},{},{},{"queue":12}]}`, `items[3].queue must be a string, got number (at byte 28)`},
		{`{"items":[{"traceId":true}]}`, `items[0].traceId must be a string, got boolean (at byte 21)`},
		{`{"items":[{"queue":"q","payload":{"a":1,}}]}`, `malformed JSON at byte 40 in items[0].payload: invalid character '}' looking for beginning of object key string`},
		{`{"items":[{"queue":"q","payload":[1,2}]}`, `malformed JSON at byte 37 in items[0].payload: invalid character '}' after array element`},
		{`{"items":[{"payload":01}]}`, `malformed JSON at byte 22 in items[0]: invalid character '1' after object key:value pair`},
		{`{"items":[{"payload":1.}]}`, `malformed JSON at byte 23 in items[0].payload: invalid character '}' after decimal point in numeric literal`},
		{`{"items":[{"payload":"a` + "\x01" + `"}]}`, `malformed JSON at byte 23 in items[0].payload: invalid character '\x01' in string literal`},
		{`{"items":[{"payload":"\q"}]}`, `malformed JSON at byte 23 in items[0].payload: invalid character 'q' in string escape code`},
		{`{"items":[{"payload":tru}]}`, `malformed JSON at byte 24 in items[0].payload: invalid character '}' in literal true (expecting 'e')`},
		{`{"items":[{"payload":[`, `malformed JSON at byte 22 in items[0].payload: unexpected end of input`},
		{`{"items":[{"queue":"q"},]}`, `malformed JSON at byte 24 in items[1]: invalid character ']' looking for beginning of value`},
		{`{"items":[]} {}`, `malformed JSON at byte 13: invalid character '{' after top-level value`},
		{`{"odd key!":[}`, `malformed JSON at byte 13 in ["odd key!"]: invalid character '}' looking for beginning of value`},
		// Well-formed, but PostgreSQL cannot store it.
		{`{"items":[{"queue":"q","transactionId":"a\u0000b"}]}`, `items[0].transactionId holds \u0000, which PostgreSQL cannot store (at byte 41)`},
		{`{"items":[{"queue":"\ud800x"}]}`, `items[0].queue holds a lone UTF-16 surrogate escape (\uD800 to \uDFFF without its pair) (at byte 20)`},
		{`{"items":[{"queue":"\udc00\ud800"}]}`, `items[0].queue holds a lone UTF-16 surrogate escape (\uD800 to \uDFFF without its pair) (at byte 20)`},
		{`{"items":[{"queue":"\ud800\u0041"}]}`, `items[0].queue holds a lone UTF-16 surrogate escape (\uD800 to \uDFFF without its pair) (at byte 20)`},
		{"{\"items\":[{\"queue\":\"a\xffb\"}]}", `items[0].queue holds bytes that are not UTF-8 (at byte 21)`},
		{"{\"items\":[{\"queue\":\"\xed\xa0\x80\"}]}", `items[0].queue holds bytes that are not UTF-8 (at byte 20)`},
		{`{"items":[{"queue":"q","payload":{"n":1e999999}}]}`, `items[0].payload is a number with an exponent beyond ±9999 (at byte 38)`},
		{`{"items":[{"queue":"q","payload":[1e400]}]}`, `items[0].payload is a number beyond the range of a float64 (about ±1.8e308) (at byte 34)`},
		{`{"items":[{"queue":"q","payload":-1e-400}]}`, `items[0].payload is a number too close to zero for a float64 (below about 5e-324) (at byte 33)`},
		{`{"items":[{"queue":"q","payload":{"\u0000":1}}]}`, `items[0].payload holds \u0000, which PostgreSQL cannot store (at byte 35)`},
		{`{"x":"\u0000","items":[]}`, `x holds \u0000, which PostgreSQL cannot store (at byte 6)`},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			t.Parallel()
			requireSameAsStdlib(t, []byte(tt.body))
			_, err := Decode([]byte(tt.body))
			if err == nil {
				t.Fatalf("Decode(%q) succeeded, want error %q", tt.body, tt.want)
			}
			if err.Error() != tt.want {
				t.Fatalf("Decode(%q) error\n got %q\nwant %q", tt.body, err.Error(), tt.want)
			}
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v does not wrap ErrSyntax", err)
			}
		})
	}
}

// TestDecodeDepthLimit checks the 10000-level limit, counting the request
// object, the items array and the item object as the first three levels.
func TestDecodeDepthLimit(t *testing.T) {
	t.Parallel()
	nested := func(levels int) []byte {
		return []byte(`{"items":[{"payload":` + strings.Repeat("[", levels) + strings.Repeat("]", levels) + `}]}`)
	}
	mixed := func(levels int) []byte {
		return []byte(`{"items":[{"payload":` + strings.Repeat(`{"a":[`, levels/2) + strings.Repeat(`]}`, levels/2) + `}]}`)
	}
	topLevel := func(levels int) []byte { // an unknown key of the request: one level in
		return []byte(`{"x":` + strings.Repeat("[", levels) + strings.Repeat("]", levels) + `,"items":[]}`)
	}
	unknownInItem := func(levels int) []byte {
		return []byte(`{"items":[{"x":` + strings.Repeat(`{"a":`, levels) + "1" + strings.Repeat("}", levels) + `}]}`)
	}
	for _, body := range [][]byte{
		nested(9997), nested(9998), mixed(9996), mixed(9998), nested(70),
		topLevel(9999), topLevel(10000), unknownInItem(9997), unknownInItem(9998),
	} {
		requireSameAsStdlib(t, body)
	}
	if _, err := Decode(nested(9997)); err != nil {
		t.Fatalf("depth 10000: %v", err)
	}
	for _, body := range [][]byte{nested(9998), topLevel(10000), unknownInItem(9998)} {
		_, err := Decode(body)
		if err == nil || !strings.Contains(err.Error(), "exceeded max depth") {
			t.Fatalf("depth 10001: error %v, want exceeded max depth", err)
		}
	}
}

// TestPayloadAliasesBody documents that payloads are slices of the body.
func TestPayloadAliasesBody(t *testing.T) {
	t.Parallel()
	body := []byte(`{"items":[{"payload":{"n":1}}]}`)
	req, err := Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	body[26] = '2'
	if got := string(req.Items[0].Payload); got != `{"n":2}` {
		t.Fatalf("payload = %s after editing the body, want it to alias the body", got)
	}
}

func TestRepeatedStringsAreShared(t *testing.T) { // not parallel: it counts allocations
	req, err := Decode(pushBody(8, 100))
	if err != nil {
		t.Fatal(err)
	}
	if q0, q1 := req.Items[0].Queue, req.Items[1].Queue; q0 != "orders" || q1 != q0 {
		t.Fatalf("queues = %q, %q, want orders twice", q0, q1)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := Decode(benchBody); err != nil {
			t.Fatal(err)
		}
	})
	// One allocation per item for its strings (the queue name is shared
	// across items), plus the items slice, grown once.
	if allocs > 100+4 {
		t.Fatalf("Decode made %.0f allocations for 100 items, want at most 104", allocs)
	}
}
