// Package retention is lethe's maintenance loop: it reclaims what the log
// stores according to each queue's rules (retentionSeconds,
// completedRetentionSeconds, maxWaitTimeSeconds), purges the transaction-id
// hash sidecar on its own clock, deletes partitions that stayed empty and
// idle, and ages out its own history and, when configured, dead letters.
//
// One replica sweeps per cycle: the one holding a session advisory lock, on
// a connection of the loop's own (never one of the request pool's). There
// is no wrapping transaction. Every step is one stored-function call that
// takes a single partition row lock (the one pushes take), handles at most
// BatchSize rows and commits, so pushes interleave with a long sweep and no
// step can deadlock against a writer of several partitions. A step that
// fails is logged and counted and the cycle goes on; between steps the loop
// rests so that it works at most MaxBusy of the time. Every cutoff of a
// cycle comes from one reading of the injected clock.
//
// Each rule is one type in one file (rule_<name>.go, the contract in
// rule.go) and one line of the registry (registry.go); a cycle builds its
// work list, then runs the registry in order, and the loop keeps around
// every rule's step what each owes: the test hook, the step timeout, the
// duty cycle's rest and failure counting.
//
// Completed retention deletes only what every consumer group subscribed to
// the queue has consumed (lethe.completed_bound); only retentionSeconds and
// maxWaitTimeSeconds may delete unread data, and each such loss is recorded
// against the groups that lost it.
//
// docs/retention.md is the operator's guide.
package retention
