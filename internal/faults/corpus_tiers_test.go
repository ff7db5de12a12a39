package faults_test

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/lethe-mq/lethe/internal/validate"
)

// tierCases are bad requests to the retention tier routes and the
// test-only ones (the corpus replica runs with LETHE_TEST_CLOCK=1): each is
// refused before anything is written.
func tierCases() []badRequest {
	bad, missing := http.StatusBadRequest, http.StatusNotFound
	req := func(method, path, body string, want int) badRequest {
		return badRequest{fmt.Sprintf("%s %s %s", method, path, body), method, path, body, want}
	}
	out := []badRequest{
		req("POST", "/api/v1/retention/tiers", "", http.StatusMethodNotAllowed),
		req("GET", "/api/v1/retention/explain/no-such-queue", "", missing),
		req("POST", "/api/v1/retention/changes/no-such-queue/confirm", "", missing),
		req("POST", "/api/v1/retention/changes/seed/confirm", "", missing), // nothing awaits confirmation
		req("GET", "/api/v1/retention/changes/seed/confirm", "", http.StatusMethodNotAllowed),
		req("GET", "/api/v1/test/retention/run", "", http.StatusMethodNotAllowed),
		req("GET", "/api/v1/test/clock", "", http.StatusMethodNotAllowed),
	}
	for _, body := range []string{``, `{}`, `{"advance":"-1h"}`, `{"advance":"0s"}`, `{"advance":"soon"}`,
		`{"advance":36}`, `{"advance":"1h\u0000"}`, `{"advance":"1h"} x`, `[]`} {
		out = append(out, req("POST", "/api/v1/test/clock", body, bad))
	}
	for _, options := range []string{`{"retentionTier":"5d"}`, `{"retentionTier":7}`, `{"retentionTier":""}`,
		`{"quarantined":"maybe"}`, `{"requiredGroups":"g1"}`, `{"requiredGroups":["g\u0000"]}`,
		`{"requiredGroups":[" "]}`, `{"requiredGroups":[1]}`,
		`{"requiredGroups":["g` + strings.Repeat(`","g`, validate.RequiredGroupsMax) + `"]}`} {
		out = append(out, req("POST", "/api/v1/configure", `{"queue":"seed","options":`+options+`}`, bad))
	}
	for _, what := range sortedKeys(badPathNames) {
		name := badPathNames[what]
		out = append(out, req("GET", "/api/v1/retention/explain/"+name, "", bad),
			req("POST", "/api/v1/retention/changes/"+name+"/confirm", "", bad))
	}
	return out
}
