// Package archtest holds no code: its test checks the import direction
// docs/ARCHITECTURE.md states ("Import direction"), over the packages as
// `go list` sees them.
package archtest
