package profiling

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"
)

// fetch GETs a profile from lethe's pprof server (LETHE_PPROF_ADDR) and
// parses it.
func fetch(ctx context.Context, client *http.Client, url string, limit time.Duration) (*profile.Profile, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get %s: %s: %s", url, resp.Status, body)
	}
	p, err := profile.ParseData(body)
	if err != nil {
		return nil, fmt.Errorf("parse the profile from %s: %w", url, err)
	}
	return p, nil
}

// cpuCapture records lethe's CPU profile over a window whose end is known
// only when it comes: Go's profile handler takes a whole number of seconds
// and gives nothing when cut short, so the window is covered by one request
// of its expected length (at least a second), then requests of one second
// each until finish is called. The profile therefore covers the window
// rounded up to the second after its end.
type cpuCapture struct {
	stop     chan struct{}
	done     chan struct{}
	profiles []*profile.Profile
	err      error
	chunks   atomic.Int32 // requests answered so far, for tests
}

func startCPU(ctx context.Context, client *http.Client, base string, expected time.Duration) *cpuCapture {
	c := &cpuCapture{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		secs := max(1, int(math.Ceil(expected.Seconds())))
		for {
			p, err := fetch(ctx, client, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, secs),
				time.Duration(secs)*time.Second+30*time.Second)
			if err != nil {
				c.err = err
				return
			}
			c.profiles = append(c.profiles, p)
			c.chunks.Add(1)
			select {
			case <-c.stop:
				return
			default:
			}
			secs = 1
		}
	}()
	return c
}

// finish waits for the request under way and merges what was recorded.
// A request that failed after others succeeded leaves the profile of those
// and the error.
func (c *cpuCapture) finish() (*profile.Profile, error) {
	close(c.stop)
	<-c.done
	var err error
	if c.err != nil {
		err = fmt.Errorf("lethe's CPU profile: %w", c.err)
	}
	if len(c.profiles) == 0 {
		return nil, err
	}
	p, mergeErr := profile.Merge(c.profiles)
	if mergeErr != nil {
		return nil, fmt.Errorf("merge lethe's CPU profiles: %w", mergeErr)
	}
	return p, err
}
