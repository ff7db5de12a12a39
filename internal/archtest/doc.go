// Package archtest holds no code: its tests check the import direction
// docs/ARCHITECTURE.md states ("Import direction"), over the packages as
// `go list` sees them, and that the repository's code, comments and docs
// speak of behaviours, not of the issue, seed, session or date they came
// from (records_test.go), and that the CLI's commands are wired from its
// root command, not by init() (cliwiring_test.go).
package archtest
