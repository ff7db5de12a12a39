#!/usr/bin/env bash
# Measures the hash sidecar's GIN index with fastupdate off (lethe's setting)
# and on (a 256 kB pending list), in raw SQL on a private PostgreSQL: each
# pgbench transaction probes 100 random hashes against 10 M stored ones and
# inserts them as one row, as one 100-frame flush of lethe.append does.
# About 3 minutes (1 to load, 15 s per measurement). Results: BENCHMARKS.md.
#
#   bash bench/gin-fastupdate.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
dir="$(mktemp -d /tmp/gin-fastupdate.XXXXXX)"
port=55439
run() { if [ "$(id -u)" -eq 0 ]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi; }
[ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
run "$bin/initdb -D $dir/data -A trust -U postgres >/dev/null"
run "$bin/pg_ctl -D $dir/data -o '-p $port -k $dir -c max_wal_size=256MB -c shared_buffers=128MB' -l $dir/log start >/dev/null"
trap 'run "$bin/pg_ctl -D $dir/data stop -m fast >/dev/null"; rm -rf "$dir"' EXIT
sleep 2
echo "loading 100,000 rows of 100 hashes into both tables (about a minute)" >&2
"$bin/psql" -q -h "$dir" -p $port -U postgres -f "$here/sql/gin-fastupdate.sql"
for f in gen_only flush_off flush_on flush_off flush_on; do
	echo "SELECT $f((random()*100)::int);" >"$dir/s.sql"
	printf '%-10s ' "$f"
	"$bin/pgbench" -n -h "$dir" -p $port -U postgres -c 8 -j 2 -T 15 -f "$dir/s.sql" postgres 2>&1 |
		grep -E '^tps|latency average' | tr '\n' ' '
	echo
done
