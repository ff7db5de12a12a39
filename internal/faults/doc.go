// Package faults is lethe's fault suite: real processes and real requests
// that try to make lethe lose or corrupt data or answer a 5xx. lethe killed
// with SIGKILL under load, PostgreSQL restarted under load, a corpus of
// malformed requests over every route, and one of requests whose
// credential falls short (a JWT without exp, a reset by the write token).
// It has tests only.
package faults
