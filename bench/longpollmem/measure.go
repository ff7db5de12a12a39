package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/stack"
)

var errNotReady = errors.New("the long polls did not all start waiting in time")

// measure reads lethe's RSS, opens o.n long polls on a queue nothing is
// pushed to, waits until lethe counts them all (lethe_long_polls_waiting),
// reads the RSS again, then ends the polls.
func measure(ctx context.Context, url string, pid int, o options, log io.Writer) (result, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.n, DisableCompression: true}}
	if _, err := waiting(ctx, client, url); err != nil {
		return result{}, err
	}
	before, err := stack.RSS(pid)
	if err != nil {
		return result{}, err
	}
	pollCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make(chan error, o.n)
	start := time.Now()
	for i := range o.n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := longPoll(pollCtx, client, url, i, o.wait); err != nil && pollCtx.Err() == nil {
				errs <- err
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	fmt.Fprintf(log, "opening %d long polls\n", o.n)
	if err := awaitWaiting(ctx, client, url, o, errs); err != nil {
		return result{}, err
	}
	took := time.Since(start)
	after, err := stack.RSS(pid)
	if err != nil {
		return result{}, err
	}
	return result{n: o.n, before: before, after: after, took: took}, nil
}

// awaitWaiting polls lethe's gauge until o.n polls wait, a poll fails, or
// o.deadline passes.
func awaitWaiting(ctx context.Context, client *http.Client, url string, o options, errs <-chan error) error {
	deadline := time.Now().Add(o.deadline)
	for {
		n, err := waiting(ctx, client, url)
		switch {
		case err != nil:
			return err
		case n >= o.n:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("%w: %d of %d after %s", errNotReady, n, o.n, o.deadline)
		}
		select {
		case err := <-errs:
			return fmt.Errorf("a long poll failed (raise ulimit -n?): %w", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func longPoll(ctx context.Context, client *http.Client, url string, i int, wait time.Duration) error {
	q := fmt.Sprintf("%s/api/v1/pop/queue/longpollmem?wait=true&timeout=%d&consumerGroup=g%d", url, wait.Milliseconds(), i%64)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, q, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pop answered %d", resp.StatusCode)
	}
	return nil
}

// waiting reads lethe_long_polls_waiting from lethe's metrics.
func waiting(ctx context.Context, client *http.Client, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "lethe_long_polls_waiting "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int(f), err
		}
	}
	return 0, fmt.Errorf("%s/metrics has no lethe_long_polls_waiting: is this lethe too old?", url)
}
