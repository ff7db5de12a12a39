// Package queuesfile reads the declarative queues file of `lethe validate`
// and `lethe apply`: YAML naming each queue and its options, checked
// offline by the same rules the server applies (queueopts.Parse),
// every problem reported with its line.
//
//	queues:
//	  orders:
//	    retentionTier: 1w        # 1w, 3w, 7w (or 7d, 21d, 49d) or forever
//	    quarantined: keep        # keep or purge
//	    requiredGroups: [billing]
//	    leaseTime: 60
package queuesfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/queueopts"
	"github.com/lethe-mq/lethe/internal/validate"
)

// Queue is one queue of the file: its options as a configure request's
// JSON (only the options the file names).
type Queue struct {
	Name    string
	Line    int
	Options json.RawMessage
	// Named are the option names the file gives, in file order.
	Named []string
}

// Problem is one thing wrong with the file, at a line.
type Problem struct {
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("line %d: %s", p.Line, p.Msg) }

// Problems is every problem of a file; it is an error.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Parse reads a queues file. It answers the queues when the file has no
// problem, else every problem it found (as Problems).
func Parse(data []byte) ([]Queue, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, Problems{{Line: yamlErrorLine(err), Msg: err.Error()}}
	}
	if len(doc.Content) == 0 {
		return nil, Problems{{Line: 1, Msg: "the file is empty; it needs a top-level `queues:` mapping"}}
	}
	top := doc.Content[0]
	queues, problems := queuesNode(top)
	if queues == nil {
		return nil, problems
	}
	var out []Queue
	seen := map[string]int{}
	for i := 0; i+1 < len(queues.Content); i += 2 {
		k, v := queues.Content[i], queues.Content[i+1]
		if prev, ok := seen[k.Value]; ok {
			problems = append(problems, Problem{k.Line, fmt.Sprintf("queue %q is declared twice (first on line %d)", k.Value, prev)})
			continue
		}
		seen[k.Value] = k.Line
		if err := validate.Name("queue", k.Value); err != nil {
			problems = append(problems, Problem{k.Line, err.Error()})
		}
		q, ps := queueOptions(k, v)
		problems = append(problems, ps...)
		out = append(out, q)
	}
	if len(problems) > 0 {
		sort.SliceStable(problems, func(i, j int) bool { return problems[i].Line < problems[j].Line })
		return nil, problems
	}
	return out, nil
}

// queuesNode finds the `queues:` mapping of the document.
func queuesNode(top *yaml.Node) (*yaml.Node, Problems) {
	if top.Kind != yaml.MappingNode {
		return nil, Problems{{top.Line, "the file must be a mapping with one key, `queues:`"}}
	}
	var queues *yaml.Node
	var problems Problems
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Value != "queues" {
			problems = append(problems, Problem{k.Line, fmt.Sprintf("unknown key %q: the file has one key, `queues:`", k.Value)})
			continue
		}
		if v.Kind != yaml.MappingNode {
			problems = append(problems, Problem{v.Line, "`queues:` must map each queue name to its options"})
			continue
		}
		queues = v
	}
	if queues == nil && len(problems) == 0 {
		problems = Problems{{top.Line, "no `queues:` key"}}
	}
	return queues, problems
}

// queueOptions checks one queue's options one by one, so every bad one is
// reported with its line, and gathers them into a configure's options.
func queueOptions(name, opts *yaml.Node) (Queue, Problems) {
	q := Queue{Name: name.Value, Line: name.Line}
	if opts.Kind == yaml.ScalarNode && opts.Tag == "!!null" {
		q.Options = json.RawMessage(`{}`)
		return q, nil
	}
	if opts.Kind != yaml.MappingNode {
		return q, Problems{{opts.Line, fmt.Sprintf("queue %q: its options must be a mapping (option: value)", name.Value)}}
	}
	var problems Problems
	all := map[string]any{}
	for i := 0; i+1 < len(opts.Content); i += 2 {
		k, v := opts.Content[i], opts.Content[i+1]
		var val any
		if err := v.Decode(&val); err != nil {
			problems = append(problems, Problem{v.Line, fmt.Sprintf("%s: %v", k.Value, err)})
			continue
		}
		one, _ := json.Marshal(map[string]any{k.Value: val})
		if _, err := queueopts.Parse(one, api.DefaultQueueOptions()); err != nil {
			problems = append(problems, Problem{k.Line, describe(k.Value, err)})
			continue
		}
		if _, dup := all[k.Value]; dup {
			problems = append(problems, Problem{k.Line, fmt.Sprintf("option %s is given twice", k.Value)})
			continue
		}
		all[k.Value] = val
		q.Named = append(q.Named, k.Value)
	}
	q.Options, _ = json.Marshal(all)
	return q, problems
}

// describe words an option's error for a person editing the file.
func describe(key string, err error) string {
	msg := strings.TrimPrefix(err.Error(), apierr.Invalid.Error()+": ")
	if strings.Contains(msg, "unknown field") {
		return fmt.Sprintf("unknown option %q; the options are %s", key, strings.Join(OptionNames(), ", "))
	}
	return msg
}

// OptionNames lists the queue options a file may give.
func OptionNames() []string {
	raw, _ := json.Marshal(api.QueueOptions{RetentionTier: "x", Quarantined: "x", RequiredGroups: []string{"x"}})
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// yamlErrorLine finds "line N" in a YAML syntax error (1 when none).
func yamlErrorLine(err error) int {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	var n int
	if i := strings.Index(msg, "line "); i >= 0 {
		if _, e := fmt.Sscanf(msg[i:], "line %d", &n); e == nil {
			return n
		}
	}
	return 1
}
