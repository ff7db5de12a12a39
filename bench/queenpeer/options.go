package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
)

// options is one measurement's shape; the defaults are the side-by-side
// pop+ack's: 300,000 messages over 8 partitions.
type options struct {
	url        string
	system     string // the server's name in the result
	n          int
	partitions int
	pushers    int
	pushBatch  int
	consumers  int
	popBatch   int
	size       int
	queue      string
	group      string
	jsonPath   string
	limit      time.Duration // each phase's time limit
}

var errHelp = flag.ErrHelp

func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("queenpeer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.url, "url", "", "server speaking Queen's HTTP API (lethe or Queen), e.g. http://127.0.0.1:6632")
	fs.StringVar(&o.system, "system", "", "name of the server in the result (default: the URL's host)")
	fs.IntVar(&o.n, "n", 300_000, "messages in the backlog")
	fs.IntVar(&o.partitions, "partitions", 8, "partitions the backlog is spread over")
	fs.IntVar(&o.pushers, "push-clients", 8, "clients pushing the backlog")
	fs.IntVar(&o.pushBatch, "push-batch", 100, "messages per push request (one partition each)")
	fs.IntVar(&o.consumers, "consumers", 8, "consumers draining the backlog")
	fs.IntVar(&o.popBatch, "batch", 100, "messages one pop asks for")
	fs.IntVar(&o.size, "size", 1024, "payload bytes (a JSON string of random characters)")
	fs.StringVar(&o.queue, "queue", "", "queue to use; must be new (default: queenpeer-<time>)")
	fs.StringVar(&o.group, "group", "g", "consumer group that drains the backlog")
	fs.StringVar(&o.jsonPath, "json", "", "append the result as one JSON line to this file")
	fs.DurationVar(&o.limit, "limit", 15*time.Minute, "time limit of the push and of the drain, each")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q: every option is a flag", fs.Args())
	}
	o.url = strings.TrimRight(o.url, "/")
	if o.queue == "" {
		o.queue = "queenpeer-" + time.Now().UTC().Format("20060102-150405.000")
	}
	return o, o.validate()
}

func (o *options) validate() error {
	u, err := url.Parse(o.url)
	if o.url == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("-url must name the server, e.g. -url http://127.0.0.1:6632")
	}
	if o.system == "" {
		o.system = u.Host
	}
	for _, c := range []struct {
		name string
		v    int
		min  int
	}{{"-n", o.n, 1}, {"-partitions", o.partitions, 1}, {"-push-clients", o.pushers, 1}, {"-push-batch", o.pushBatch, 1},
		{"-consumers", o.consumers, 1}, {"-batch", o.popBatch, 1}, {"-size", o.size, 2}} {
		if c.v < c.min {
			return fmt.Errorf("%s must be at least %d, not %d", c.name, c.min, c.v)
		}
	}
	if o.limit <= 0 {
		return errors.New("-limit must be positive")
	}
	return nil
}
