package pushdec

import (
	"math/rand/v2"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
)

// ackFuzzSeeds are tricky ack batch bodies, valid and not; the table tests
// and the fuzzer both use them.
var ackFuzzSeeds = []string{
	`{"consumerGroup":"g","acknowledgments":[{"transactionId":"t","partitionId":"p","leaseId":"l","status":"completed"}]}`,
	`{"acknowledgments":[{"transactionId":"t","partitionId":"p","leaseId":"l","status":"failed","consumerGroup":"g2","error":"boom"}]}`,
	` { "acknowledgments" : [ { "transactionId" : "t" , "status" : "retry" } , { } ] , "consumerGroup" : "g" } `,
	"{\"acknowledgments\":\t\r\n[]}\n",
	`{"acknowledgments":[]}`,
	`{"acknowledgments":null}`,
	`{"acknowledgments":[null]}`,
	`{"acknowledgments":[{}]}`,
	`{}`,
	`null`,
	`{"consumerGroup":null,"acknowledgments":[{"transactionId":null,"partitionId":null,"leaseId":null,"status":null,"consumerGroup":null,"error":null}]}`,
	`{"acknowledgments":[{"error":"a\"b\\c\/d\b\f\n\r\t"}]}`,
	`{"acknowledgments":[{"error":"\u00e9\u4e2d\ud83d\ude00"}]}`,
	`{"acknowledgments":[{"error":"\ud800"}]}`,
	`{"acknowledgments":[{"error":"\udc00\ud800x"}]}`,
	`{"acknowledgments":[{"leaseId":"\ud800\u0041"}]}`,
	"{\"acknowledgments\":[{\"error\":\"\xff\xfe\xed\xa0\x80ok\"}]}",
	"{\"acknowledgments\":[{\"error\":\"caf\xc3\xa9\"}]}",
	"{\"acknowledgments\":[{\"error\":\"a\x01b\"}]}",
	`{"ACKNOWLEDGMENTS":[{"TRANSACTIONID":"t","PartitionID":"p","leaseid":"l","STATUS":"dlq","ConsumerGroup":"g","ERROR":"e"}],"CONSUMERGROUP":"top"}`,
	"{\"ackno\u212aledgments\":[],\"acknowledgment\u017f\":[{\"tran\u017factionId\":\"long-s\",\"\u212aey\":1}]}",
	`{"\u0061cknowledgments":[{"\u0074ransactionId":"escaped keys"}],"consumer\u0047roup":"g"}`,
	`{"acknowledgments":[{"transactionId":"a","transactionId":"b","status":"x","status":null}]}`,
	`{"acknowledgments":[{"transactionId":"a","leaseId":"l"}],"acknowledgments":[{"transactionId":"b"}]}`,
	`{"acknowledgments":[{"transactionId":"a"},{"transactionId":"b"},{"transactionId":"c"}],"acknowledgments":[{"transactionId":"x"}],"acknowledgments":[null,null,{}]}`,
	`{"acknowledgments":[{"transactionId":"a"}],"acknowledgments":[],"acknowledgments":[null]}`,
	`{"acknowledgments":[{"transactionId":"a"}],"acknowledgments":null,"acknowledgments":[null]}`,
	`{"consumerGroup":"a","consumerGroup":"b","consumerGroup":null}`,
	`{"other":{"deep":[1,{"x":[true,false,null]}]},"acknowledgments":[{"transactionId":"t","extra":[1,2,{"k":"v"}],"retries":1.5e3}]}`,
	`{"acknowledgments":[{"partitionId":"p","leaseId":"l"},{"partitionId":"p","leaseId":"l"},{"partitionId":"p\n","leaseId":"l"}]}`,
	`{"consumerGroup":1,"acknowledgments":[]}`,
	`{"acknowledgments":[{"transactionId":1}]}`,
	`{"acknowledgments":[{"leaseId":true}]}`,
	`{"acknowledgments":[{"status":{}}]}`,
	`{"acknowledgments":[{"error":[]}]}`,
	`{"acknowledgments":[1]}`,
	`{"acknowledgments":["x"]}`,
	`{"acknowledgments":[[]]}`,
	`{"acknowledgments":{}}`,
	`{"acknowledgments":"x"}`,
	`{"acknowledgments":true}`,
	`[]`,
	`[{"transactionId":"t"}]`,
	`"x"`,
	`1`,
	``,
	` `,
	`{`,
	`{"acknowledgments":[{"transactionId":"t"},]}`,
	`{"acknowledgments":[{"transactionId":"t",}]}`,
	`{"acknowledgments":[],}`,
	`{"acknowledgments":[]} x`,
	`{"acknowledgments":[]}{}`,
	`{"acknowledgments":[{"transactionId":"t"}`,
	`{"acknowledgments":[{"transactionId":"\x"}]}`,
	`{"acknowledgments":[{"transactionId":"\u12g4"}]}`,
	`{"acknowledgments":[{"transactionId":'t'}]}`,
	`{"acknowledgments":[{"x":01}]}`,
	`{"acknowledgments":[{"x":NaN}]}`,
	`{"acknowledgments":[{"x":1e400}]}`,
	`{"x":-1e-400,"acknowledgments":[]}`,
	"\xef\xbb\xbf{\"acknowledgments\":[]}",
	"{\"acknowledgments\":[]}\x00",
	"{\"acknowledgments\":[{\"transactionId\":\"\\u0000\"}]}",
	"{\"acknowledgments\":[{\"\\u0000\":\"t\"}]}",
	"{\"acknowledgments\"\v:[]}",
	`{"acknowledgments":[{"x":{"a":"\"}"},"transactionId":"after"}]}`,
}

func FuzzDecodeAckBatchMatchesStdlib(f *testing.F) {
	for _, s := range ackFuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add(ackBody(5))
	rng := rand.New(rand.NewPCG(5, 6))
	for range 40 {
		g := generator{rng: rng}
		g.ackBatch()
		f.Add([]byte(g.b.String()))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		requireAckSameAsStdlib(t, body)
	})
}

// requireAckSameAsStdlib fails t unless DecodeAckBatch and json.Unmarshal
// agree on body (see requireMatchesStdlib).
func requireAckSameAsStdlib(t *testing.T, body []byte) (api.AckBatchRequest, bool) {
	t.Helper()
	return requireMatchesStdlib(t, body, DecodeAckBatch)
}

func TestAckSeedsMatchStdlib(t *testing.T) {
	t.Parallel()
	for _, s := range ackFuzzSeeds {
		requireAckSameAsStdlib(t, []byte(s))
	}
}
