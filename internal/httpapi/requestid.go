package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync/atomic"
)

// requestIDHeader carries the request id both ways: a caller (or a proxy in
// front) may send one; every answer has one.
const requestIDHeader = "X-Request-Id"

// requestIDs makes ids unique per replica run: a random prefix and a count.
type requestIDs struct {
	prefix string
	n      atomic.Uint64
}

func newRequestIDs() requestIDs {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return requestIDs{prefix: hex.EncodeToString(b) + "-"}
}

func (g *requestIDs) next() string {
	return g.prefix + strconv.FormatUint(g.n.Add(1), 36)
}

type requestIDKey struct{}

// withRequestID gives every request an id, kept from the caller's
// X-Request-Id when it is a short token, and answers it in X-Request-Id.
func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(requestIDHeader)
		if !usableRequestID(id) {
			id = s.ids.next()
		}
		w.Header().Set(requestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// requestID is r's id, or "" outside withRequestID.
func requestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey{}).(string)
	return id
}

// usableRequestID accepts 1 to 64 letters, digits, '-', '_' and '.', so a
// caller's id cannot forge log lines or headers.
func usableRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
