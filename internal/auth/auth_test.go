package auth

import (
	"errors"
	"net/http"
	"testing"

	"github.com/lethe-mq/lethe/internal/apierr"
)

func request(token string) *http.Request {
	r, _ := http.NewRequest("GET", "/", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

func TestCheck(t *testing.T) {
	t.Parallel()
	on := Tokens{Token: "plain", OperatorToken: "op"}
	for _, c := range []struct {
		name   string
		tokens Tokens
		token  string
		role   Role
		want   error // nil, apierr.Unauthorized or apierr.Forbidden
	}{
		{"auth off", Tokens{}, "", Operator, nil},
		{"public", on, "", Public, nil},
		{"client without token", on, "", Client, apierr.Unauthorized},
		{"client wrong token", on, "nope", Client, apierr.Unauthorized},
		{"client plain", on, "plain", Client, nil},
		{"client operator", on, "op", Client, nil},
		{"operator plain", on, "plain", Operator, apierr.Forbidden},
		{"operator operator", on, "op", Operator, nil},
		{"operator none configured", Tokens{Token: "plain"}, "plain", Operator, apierr.Forbidden},
		{"operator token only", Tokens{OperatorToken: "op"}, "", Client, apierr.Unauthorized},
	} {
		err := c.tokens.Check(request(c.token), c.role)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: Check = %v, want %v", c.name, err, c.want)
		}
	}
	if !on.IsOperator(request("op")) || on.IsOperator(request("plain")) || !(Tokens{}).IsOperator(request("")) {
		t.Error("IsOperator disagrees with the tokens")
	}
}
