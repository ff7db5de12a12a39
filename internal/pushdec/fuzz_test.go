package pushdec

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/lethe-mq/lethe/internal/validate"
)

// fuzzSeeds are tricky bodies, valid and not; the table tests and the fuzzer
// both use them.
var fuzzSeeds = []string{
	`{"items":[{"queue":"q","payload":{"a":1}}]}`,
	`{"items":[{"queue":"orders","partition":"p-1","payload":{"id":7,"tags":["x","y"],"ok":true,"n":null},"transactionId":"t1","traceId":"tr"}]}`,
	` { "items" : [ { "queue" : "q" , "payload" : [ 1 , 2.5 , -0 , 1e400 , 1E-2 , 0.0e+0 ] } ] } `,
	"{\"items\":[{\"queue\":\"q\",\"payload\":\t\r\n\"x\"}]}\n",
	`{"items":[]}`,
	`{"items":null}`,
	`{"items":[null]}`,
	`{}`,
	`null`,
	`{"items":[{}]}`,
	`{"items":[{"payload":null}]}`,
	`{"items":[{"queue":null,"partition":null,"transactionId":null,"traceId":null}]}`,
	`{"items":[{"queue":"a\"b\\c\/d\b\f\n\r\t"}]}`,
	`{"items":[{"queue":"\u00e9\u4e2d\ud83d\ude00"}]}`,
	`{"items":[{"queue":"\ud800"}]}`,
	`{"items":[{"queue":"\ud800\ud800\udc00"}]}`,
	`{"items":[{"queue":"\udc00\ud800x"}]}`,
	`{"items":[{"queue":"\ud800\u0041"}]}`,
	"{\"items\":[{\"queue\":\"\xff\xfe\xed\xa0\x80ok\"}]}",
	"{\"items\":[{\"queue\":\"caf\xc3\xa9\"}]}",
	"{\"items\":[{\"queue\":\"a\x01b\"}]}",
	`{"items":[{"QUEUE":"upper","Payload":1,"TRANSACTIONID":"t","traceid":"x","PaRtItIoN":"p"}]}`,
	"{\"items\":[{\"\u212aey\":1,\"tran\u017factionId\":\"long-s\"}]}",
	"{\"item\u017f\":[{\"queue\":\"long-s items\"}]}",
	`{"\u0069tems":[{"\u0071ueue":"escaped keys"}]}`,
	`{"items":[{"queue":"a","queue":"b","payload":1,"payload":2}]}`,
	`{"items":[{"queue":"a","traceId":"t"}],"items":[{"queue":"b"}]}`,
	`{"items":[{"queue":"a"},{"queue":"b"},{"queue":"c"}],"items":[{"queue":"x"}],"items":[null,null,{}]}`,
	`{"items":[{"queue":"a"}],"items":[],"items":[null]}`,
	`{"items":[{"queue":"a"}],"items":null,"items":[null]}`,
	`{"other":{"deep":[1,{"x":[true,false,null]}]},"items":[{"queue":"q","extra":[1,2,{"k":"v"}]}]}`,
	`{"items":[{"queue":1}]}`,
	`{"items":[{"queue":true}]}`,
	`{"items":[{"queue":{}}]}`,
	`{"items":[{"queue":[]}]}`,
	`{"items":[1]}`,
	`{"items":["x"]}`,
	`{"items":{}}`,
	`{"items":"x"}`,
	`[]`,
	`"x"`,
	`1`,
	``,
	` `,
	`{`,
	`{"items":[{"queue":"q","payload":01}]}`,
	`{"items":[{"queue":"q","payload":1.}]}`,
	`{"items":[{"queue":"q","payload":.1}]}`,
	`{"items":[{"queue":"q","payload":1e}]}`,
	`{"items":[{"queue":"q","payload":-}]}`,
	`{"items":[{"queue":"q","payload":+1}]}`,
	`{"items":[{"queue":"q","payload":[1,]}]}`,
	`{"items":[{"queue":"q","payload":{"a":1,}}]}`,
	`{"items":[{"queue":"q"},]}`,
	`{"items":[{"queue":"q",}]}`,
	`{"items":[],}`,
	`{"items":[]} x`,
	`{"items":[]}{}`,
	`{"items":[{"queue":"q","payload":tru}]}`,
	`{"items":[{"queue":"q","payload":nul}]}`,
	`{"items":[{"queue":"q","payload":"\x"}]}`,
	`{"items":[{"queue":"q","payload":"\u12g4"}]}`,
	`{"items":[{"queue":"q","payload":'x'}]}`,
	`{"items":[{"queue":"q","payload":{1:2}}]}`,
	`{"items":[{"queue":"q","payload":NaN}]}`,
	"\xef\xbb\xbf{\"items\":[]}",
	"{\"items\":[]}\x00",
	"{\"items\":[{\"queue\":\"q\",\"payload\":\"\\u0000\"}]}",
	"{\"items\":[{\"queue\":\"\\u0000\"}]}",
	"{\"items\"\v:[]}",
	`{"items":[{"payload":{"a":"\"}"},"queue":"after"}]}`,
	`{"items":[{"payload":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}]}`,
}

func FuzzDecodeMatchesStdlib(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add(pushBody(3, 64))
	rng := rand.New(rand.NewPCG(3, 4))
	for range 40 {
		g := generator{rng: rng}
		g.request()
		f.Add([]byte(g.b.String()))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		requireSameAsStdlib(t, body)
	})
}

// requireSameAsStdlib fails t unless Decode and json.Unmarshal agree on body
// (see requireMatchesStdlib), and checks that payloads cannot be appended to.
func requireSameAsStdlib(t *testing.T, body []byte) {
	t.Helper()
	got, ok := requireMatchesStdlib(t, body, Decode)
	if !ok {
		return
	}
	for i, it := range got.Items {
		if cap(it.Payload) != len(it.Payload) {
			t.Fatalf("items[%d].payload has spare capacity %d: appending to it would clobber the body", i, cap(it.Payload)-len(it.Payload))
		}
	}
}

// requireMatchesStdlib fails t unless decode and json.Unmarshal into a T
// agree on body, but for the documented differences: decode refuses a bare
// null, and a well-formed body that validate.Storable, a separate scanner,
// also refuses. It returns what decode gave and whether decode accepted body.
func requireMatchesStdlib[T any](t *testing.T, body []byte, decode func([]byte) (T, error)) (T, bool) {
	t.Helper()
	original := bytes.Clone(body)
	got, err := decode(body)
	var want T
	wantErr := json.Unmarshal(body, &want)
	if !bytes.Equal(body, original) {
		t.Fatalf("decoding %q modified the input", body)
	}

	if wantErr == nil && string(bytes.Trim(body, " \t\r\n")) == "null" {
		// A documented difference: a bare null is not a request.
		if err == nil {
			t.Fatalf("decoding %q accepted a bare null", body)
		}
		return got, false
	}
	var decErr *Error
	if err != nil && (!errors.Is(err, ErrSyntax) || !errors.As(err, &decErr)) {
		t.Fatalf("decoding %q: error %v does not wrap ErrSyntax as an *Error", body, err)
	}
	storable := json.Valid(body) && validate.Storable(body) == nil
	switch {
	case err == nil && wantErr != nil:
		t.Fatalf("decoding %q accepted what encoding/json refuses: %v", body, wantErr)
	case err == nil && !storable:
		t.Fatalf("decoding %q accepted what validate.Storable refuses: %v", body, validate.Storable(body))
	case err != nil && wantErr == nil && !decErr.Unstorable:
		t.Fatalf("decoding %q: error = %v, encoding/json accepts it", body, err)
	case err != nil && wantErr == nil && storable:
		t.Fatalf("decoding %q refuses as unstorable what validate.Storable accepts: %v", body, err)
	}
	if err != nil {
		if decErr.Offset < 0 || decErr.Offset > len(body) || decErr.Reason == "" {
			t.Fatalf("decoding %q: error %#v has a bad offset or no reason", body, decErr)
		}
		return got, false
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoding %q\n got %#v\nwant %#v", body, got, want)
	}
	return got, true
}

func TestSeedsMatchStdlib(t *testing.T) {
	t.Parallel()
	for _, s := range fuzzSeeds {
		requireSameAsStdlib(t, []byte(s))
	}
}
