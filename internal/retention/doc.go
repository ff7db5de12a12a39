// Package retention is lethe's maintenance loop: it reclaims what the log
// stores according to each queue's rules (retentionSeconds,
// completedRetentionSeconds, maxWaitTimeSeconds), purges the transaction-id
// hash sidecar on its own clock, deletes partitions that stayed empty and
// idle, and ages out its own history and, when configured, dead letters.
//
// One replica sweeps per cycle: the one holding a session advisory lock.
// There is no wrapping transaction. Every step is one stored-function call
// that takes a single partition row lock (the one pushes take), handles at
// most BatchSize rows and commits, so pushes interleave with a long sweep
// and no step can deadlock against a writer of several partitions. Every
// cutoff of a cycle comes from one reading of the injected clock.
//
// docs/retention.md is the operator's guide.
package retention
