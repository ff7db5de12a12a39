package faults_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// slowClients is how many connections trickle their bodies at once.
const slowClients = 100

// Clients holding many bodies open, sending a byte now and then with a
// valid write token (chunked, so no length is declared), cannot stall
// other callers: they hold only what they sent, every push from another
// client is served (none waits for room under the bound), and the
// operator's maintenance switch answers. Connections that send headers
// and nothing more, without a credential, cost nothing. Before bodies were
// charged as they arrived and after authentication, two such connections
// held the whole bound and every POST waited 10 s, then answered 503.
// What the connections cost in latency is the benchmark's to measure; the
// test logs the p99s only.
func TestSlowBodiesDoNotStallOthers(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{Config: func(c *config.Server) {
		c.AuthToken, c.OperatorToken = "write-token", "operator-token"
		c.DataDir = t.TempDir()
	}})
	push := func(i int) (time.Duration, int) {
		body := fmt.Sprintf(`{"items":[{"queue":"hostile","partition":"p","payload":{"n":%d}}]}`, i)
		req, err := http.NewRequest(http.MethodPost, s.URL+"/api/v1/push", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer write-token")
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return time.Since(start), res.StatusCode
	}
	// p99 answers the p99 of 300 pushes, each of which must be served
	// well before the 10 s a request waits for room under the bound.
	p99 := func(what string, from int) time.Duration {
		var took []time.Duration
		for i := range 300 {
			d, status := push(from + i)
			if status != http.StatusCreated {
				t.Fatalf("%s: push %d answered %d, want 201", what, i, status)
			}
			if d > 5*time.Second {
				t.Fatalf("%s: push %d took %s: it waited for room under the bound on bodies", what, i, d)
			}
			took = append(took, d)
		}
		slices.Sort(took)
		return took[len(took)*99/100]
	}
	_ = p99("warm-up", 0)
	idle := p99("idle", 1000)

	// The hostile connections: headers only, without a credential ...
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	open := func(auth string) net.Conn {
		c, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "POST /api/v1/push HTTP/1.1\r\nHost: lethe\r\nContent-Type: application/json\r\n%sTransfer-Encoding: chunked\r\n\r\n", auth)
		return c
	}
	for range slowClients {
		open("")
	}
	// ... and with the write token, trickling a byte at a time.
	var slow []net.Conn
	for range slowClients {
		c := open("Authorization: Bearer write-token\r\n")
		fmt.Fprintf(c, "1\r\n{\r\n")
		slow = append(slow, c)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				for _, c := range slow {
					_, _ = fmt.Fprintf(c, "1\r\n \r\n")
				}
			}
		}
	}()
	defer func() { close(stop); <-done }()
	time.Sleep(200 * time.Millisecond) // every connection has been read up to its body

	// What they hold is what they sent, at most the first buffer of a body
	// without a declared length (4 KiB) each, not the 64 MiB body limit.
	if held := s.Server.BodyBytesInFlight(); held > slowClients*8<<10 {
		t.Errorf("%d slow chunked bodies hold %d bytes, want at most %d", slowClients, held, slowClients*8<<10)
	}
	attacked := p99("under slow bodies", 2000)
	t.Logf("push p99 idle %s, with %d slow bodies open %s; %d bytes of bodies held", idle, 2*slowClients, attacked,
		s.Server.BodyBytesInFlight())
	for _, on := range []string{"true", "false"} {
		req, err := http.NewRequest(http.MethodPost, s.URL+"/api/v1/system/maintenance", strings.NewReader(`{"enabled":`+on+`}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer operator-token")
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK || time.Since(start) > 5*time.Second {
			t.Errorf("maintenance %s with slow bodies open: %d after %s, want 200 without waiting for room", on, res.StatusCode, time.Since(start))
		}
	}
}
