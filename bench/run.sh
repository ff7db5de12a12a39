#!/usr/bin/env bash
# Runs lethe's benchmark side by side with its peers. Installs what the
# peers need when it is missing (nats-server from Debian; River and the NATS
# Go client come with go.mod), then runs `go run ./bench` from the
# repository root with the arguments given:
#
#   bash bench/run.sh            # the full run (about 25 minutes; a quiet machine)
#   bash bench/run.sh -quick     # every scenario for a second or two
#   bash bench/run.sh -profile   # the full run, each window profiled (profiles/ beside the results)
#
# Results: results.md, results.json, throughput-*.png in a folder of the
# run's own under bench/out/runs (git ignores it), or where -out says.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

apt_updated=""
apt_install() {
	if [ -z "$apt_updated" ]; then
		as_root apt-get update -qq
		apt_updated=1
	fi
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if ! command -v nats-server >/dev/null 2>&1; then
	echo "bench/run.sh: installing nats-server (apt-get install nats-server)" >&2
	apt_install nats-server
fi
if ! command -v pg_config >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
	echo "bench/run.sh: installing PostgreSQL (apt-get install postgresql)" >&2
	apt_install postgresql
fi

exec go run ./bench "$@"
