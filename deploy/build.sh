#!/bin/sh
# Builds the lethe binary exactly as the Dockerfile does (it runs this
# script), so a CI without Docker builds the same thing:
#
#   deploy/build.sh [OUTPUT]          default: bin/lethe
#
# VERSION sets the version `lethe version` reports (default: the tag vX.Y.Z
# of the commit built, without its v; off a tag nothing is stamped and the
# binary reports the newest version of CHANGELOG.md with its revision). The binary is static (CGO_ENABLED=0) and built outside the
# workspace (GOWORK=off): the server module alone, so the benchmark
# module's dependencies are never fetched.
set -eu

cd "$(dirname "$0")/.."
out=${1:-bin/lethe}
version=${VERSION:-$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null | sed 's/^v//' || true)}

stamp=""
if [ -n "$version" ]; then
	stamp="-X github.com/lethe-mq/lethe/internal/version.Version=${version}"
fi
CGO_ENABLED=0 GOWORK=off go build -trimpath -ldflags "-s -w ${stamp}" -o "$out" ./cmd/lethe
echo "built $out (lethe ${version:-from CHANGELOG.md})"
