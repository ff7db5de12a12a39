package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// errIncomplete is a run in which some message was not pushed, or not
// delivered exactly once: its rates do not measure the whole backlog.
var errIncomplete = errors.New("not every message was pushed and delivered exactly once")

// run pushes the backlog and drains it. The result comes back even when
// the run is incomplete (with errIncomplete), so the caller can show it.
func run(ctx context.Context, o options, progress io.Writer) (*result, error) {
	if err := checkHealth(ctx, o.url); err != nil {
		return nil, err
	}
	res := &result{System: o.system, URL: o.url, Queue: o.queue, Group: o.group, Messages: o.n,
		PayloadBytes: o.size, Partitions: o.partitions, PushClients: o.pushers, PushBatch: o.pushBatch,
		Consumers: o.consumers, PopBatch: o.popBatch, At: time.Now().UTC()}
	led := newLedger(o.n)
	fmt.Fprintf(progress, "queenpeer: %s at %s: pushing %d messages of %d bytes to %s over %d partitions\n",
		o.system, o.url, o.n, o.size, o.queue, o.partitions)
	res.Push = pushBacklog(ctx, o, led, progress)
	if res.Push.Done {
		res.PopAck, res.Pops = drainBacklog(ctx, o, led, progress)
	}
	res.Ledger = led.tally()
	res.Complete = res.Ledger.complete(o.n)
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if !res.Complete {
		return res, errIncomplete
	}
	return res, nil
}

// checkHealth fails early, with a message, when nothing serves url.
func checkHealth(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("is the server up? GET %s/health: %w", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s/health answered %d: the server is not ready", url, resp.StatusCode)
	}
	return nil
}
