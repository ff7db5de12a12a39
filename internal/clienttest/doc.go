// Package clienttest holds the tests and runnable examples of the Go client
// (module github.com/lethe-mq/lethe/client). They run against a real lethe
// replica, which only this module can start, so they live here rather than
// in the client's own module; the client module itself depends on nothing
// but the standard library and uuid (its wire types are its own client/api).
package clienttest
