package auth

import (
	"crypto/subtle"
	"strings"
)

// tokenIs compares a token with a configured static one in constant time;
// an unconfigured token ("") matches nothing.
func tokenIs(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// looksLikeJWT says tok has a JWT's three dot-separated parts.
func looksLikeJWT(tok string) bool { return strings.Count(tok, ".") == 2 }
