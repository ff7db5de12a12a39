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

func mustNew(t *testing.T, cfg Config) *Authenticator {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestStaticTokens(t *testing.T) {
	t.Parallel()
	on := mustNew(t, Config{Token: "plain", OperatorToken: "op"})
	off := mustNew(t, Config{})
	plainOnly := mustNew(t, Config{Token: "plain"})
	opOnly := mustNew(t, Config{OperatorToken: "op"})
	for _, c := range []struct {
		name  string
		a     *Authenticator
		token string
		role  Role
		want  error // nil, apierr.Unauthorized or apierr.Forbidden
	}{
		{"auth off", off, "", Operator, nil},
		{"nil authenticator", nil, "", Operator, nil},
		{"public", on, "", Public, nil},
		{"public with a wrong token", on, "nope", Public, nil},
		{"read without token", on, "", Read, apierr.Unauthorized},
		{"write wrong token", on, "nope", Write, apierr.Unauthorized},
		{"read plain", on, "plain", Read, nil},
		{"write plain", on, "plain", Write, nil},
		{"write operator", on, "op", Write, nil},
		{"operator plain", on, "plain", Operator, apierr.Forbidden},
		{"operator operator", on, "op", Operator, nil},
		{"operator none configured", plainOnly, "plain", Operator, apierr.Forbidden},
		{"operator token only", opOnly, "", Write, apierr.Unauthorized},
	} {
		_, err := c.a.Check(request(c.token), c.role)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: Check = %v, want %v", c.name, err, c.want)
		}
	}
	if !on.IsOperator(request("op")) || on.IsOperator(request("plain")) || !off.IsOperator(request("")) {
		t.Error("IsOperator disagrees with the tokens")
	}
}

func TestBearerSpellings(t *testing.T) {
	t.Parallel()
	a := mustNew(t, Config{Token: "plain"})
	for _, header := range []string{"Bearer plain", "bearer plain", "BEARER  plain ", "plain"} {
		r, _ := http.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", header)
		if _, err := a.Check(r, Write); err != nil {
			t.Errorf("Authorization %q: %v", header, err)
		}
	}
}
