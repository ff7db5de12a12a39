// Package deploy holds no code. This folder holds lethe's packaging: the
// build script the Dockerfile runs, a compose file, a systemd unit and a
// Grafana dashboard; the package's tests check each of them against the
// code (the dashboard's metric names against a real scrape, the build
// script by building and running the binary, the README's quickstart by
// running it against a real server).
package deploy
