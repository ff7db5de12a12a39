#!/bin/sh
# Builds the lethe binary exactly as the Dockerfile does (it runs this
# script), so a CI without Docker builds the same thing:
#
#   deploy/build.sh [OUTPUT]          default: bin/lethe
#
# VERSION sets the version `lethe version` reports (default: `git describe`,
# else "dev"). The binary is static (CGO_ENABLED=0) and built outside the
# workspace (GOWORK=off): the server module alone, so the benchmark
# module's dependencies are never fetched.
set -eu

cd "$(dirname "$0")/.."
out=${1:-bin/lethe}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}

CGO_ENABLED=0 GOWORK=off go build -trimpath \
	-ldflags "-s -w -X github.com/lethe-mq/lethe/internal/version.Version=${version}" \
	-o "$out" ./cmd/lethe
echo "built $out (lethe $version)"
