package retention

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
)

// Rule is one retention rule: what it is called, what it reads, how it
// finds what is due, its bounded step and the bound it promises. Every
// rule is one type in one file (rule_<name>.go) and one line of the
// registry (registry.go); the loop runs the registry in order.
//
// What every deleting step owes is the loop's, not the rule's: the step
// hook, the step timeout and the duty cycle's rest (Service.step, around
// each of the rule's calls), failure counting and logging (the loop calls
// Service.failed with the rule's phase when its step answers an error and
// the cycle goes on), and the cycle's record. The hold check and the audit
// rows are in the stored functions the steps call (lethe.queue_windows and
// the consumed bound stop every rule of a held queue; each step's history
// row is folded in by a trigger in the step's transaction).
type Rule interface {
	// Name is the rule's one name: the rule of its history and gap rows,
	// its metrics label, its row of docs/retention.md's bounds at a
	// glance. A rule that writes no history row is named by its phase.
	Name() string
	// Phase names the step the rule runs in for the test hook, the logs
	// and lethe_retention_step_failures_total; rules applied by one step
	// share it.
	Phase() string
	// Reasons are the rules its history and gap rows carry (Name first);
	// none for a rule that writes no history.
	Reasons() []string
	// Options are the queue options and settings the rule reads.
	Options() []string
	// Due says how the rule finds what is due without visiting every
	// partition.
	Due() string
	// Bound is the bound the rule promises, as explain and the docs
	// state it.
	Bound() string
	// step runs the rule's bounded steps on the cycle; nil for a rule
	// applied by another rule's step (AppliedBy).
	step() stepFunc
	// appliedBy names the rule whose step applies this one ("" when it
	// has a step of its own).
	appliedBy() string
}

// stepFunc is a rule's work in one cycle. It calls Service.step for each
// bounded statement; an error it answers is the loop's to record.
type stepFunc func(ctx context.Context, s *Service, c *cycleRun) error

// cycleRun is what a cycle hands each rule: the loop's connection, the
// work list, the cycle's one clock reading and the result it adds to.
type cycleRun struct {
	conn       *pgx.Conn
	work       []queueWork
	now        time.Time
	forceTiers bool
	res        *CycleResult
}

// explainer is a rule with a bound per queue, stated by explain.
type explainer interface {
	explain(q explainQueue, cfg Config) (api.RetentionBound, bool)
}

// explainQueue is a queue's options as explain reads them.
type explainQueue struct {
	Tier, Quarantined             string
	Enabled                       bool
	Retention, Completed, MaxWait int64
}

// abortError is a failure that ends the cycle (the context ended or the
// connection broke): the loop hands it on instead of recording it again.
type abortError struct{ error }

func (e abortError) Unwrap() error { return e.error }

// aborts reports whether err ends the cycle.
func aborts(err error) bool {
	var a abortError
	return errors.As(err, &a)
}

// rule is the part every rule type shares: what the registry reads of it.
// A rule type embeds it and adds its step (and explain, when it has one).
type rule struct {
	name, phase string
	reasons     []string
	options     []string
	due, bound  string
	by          string
}

func (r rule) Name() string      { return r.name }
func (r rule) Phase() string     { return r.phase }
func (r rule) Reasons() []string { return r.reasons }
func (r rule) Options() []string { return r.options }
func (r rule) Due() string       { return r.due }
func (r rule) Bound() string     { return r.bound }
func (r rule) appliedBy() string { return r.by }
func (r rule) step() stepFunc    { return nil }
