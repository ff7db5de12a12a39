#!/usr/bin/env bash
# Compares lethe's pop+ack with Queen's in the same run: one
# private PostgreSQL, Queen on its database "queen", lethe on its database
# "lethe", both up throughout, and bench/queenpeer driving them in turn
# (lethe, Queen, lethe, Queen, ...). Each run pushes a fresh backlog and
# drains it; the script prints every result line and, at the end, the mean
# rates and the ratio lethe / Queen.
#
#   bash bench/queen.sh /path/to/queen-server                 # the real run: 300,000 messages a run
#   bash bench/queen.sh /path/to/queen-server -n 20000        # a smoke run
#
# Arguments after the binary go to every queenpeer run (see
# `go run ./bench/queenpeer -h`). Environment:
#   ROUNDS     rounds of (lethe, Queen), default 2
#   QUEEN_DIR  the folder Queen runs in: it reads its schema from
#              ../lib/schema (or ./schema, lib/schema, ...) relative to it;
#              default: the binary's folder's parent (server/ of Queen's tree)
#   OUT        where the JSON lines and the logs go, default a folder of
#              the run's own under bench/out/runs (git ignores it)
#   PG_BIN     PostgreSQL's binaries, default `pg_config --bindir`
# Anything else in the environment reaches both servers (DB_POOL_SIZE for
# Queen; lethe's own variables), so both run with their shipped defaults
# unless you say otherwise, but for one: Queen runs NUM_WORKERS = 2 x cores
# unless NUM_WORKERS is set (its default, 10, is more than the 2 x cores
# it warns against on a small machine).
#
# PostgreSQL runs with lethe's embedded settings (internal/pgembed): fsync
# on, max_wal_size 256MB, min_wal_size 64MB, checkpoint_timeout 5min,
# wal_compression on, autovacuum_naptime 15s; a CHECKPOINT precedes every
# run so none pays for the previous one's writes.
set -euo pipefail

if [ $# -lt 1 ] || [ ! -x "$1" ]; then
	echo "usage: bash bench/queen.sh QUEEN_SERVER_BINARY [queenpeer flags...]" >&2
	exit 2
fi
queen_bin=$(realpath "$1")
shift
cd "$(dirname "$0")/.."
root=$(pwd)
rounds=${ROUNDS:-2}
queen_dir=${QUEEN_DIR:-$(dirname "$(dirname "$queen_bin")")}
out=$(realpath -m "${OUT:-bench/out/runs/$(date -u +%Y%m%d-%H%M%S)-queen}")
pg_bin=${PG_BIN:-$(pg_config --bindir)}
mkdir -p "$out"

tmp=$(mktemp -d /tmp/queen-vs-lethe.XXXXXX)
chmod 711 "$tmp" # the postgres OS user must reach its data folder
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	if [ -f "$tmp/pg/data/postmaster.pid" ]; then as_pg "$pg_bin/pg_ctl" -D "$tmp/pg/data" -m fast -w stop >/dev/null 2>&1 || true; fi
	cp "$tmp"/*.log "$tmp"/pg/*.log "$out"/ 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# as_pg runs a PostgreSQL binary as the postgres OS user when we are root
# (the server refuses to run as root).
as_pg() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 20000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

wait_healthy() { # name url pid
	for _ in $(seq 1 600); do
		if curl -fs "$2/health" >/dev/null 2>&1; then return 0; fi
		if ! kill -0 "$3" 2>/dev/null; then
			echo "queen.sh: $1 exited before answering $2/health; its log:" >&2
			tail -30 "$tmp/$1.log" >&2
			exit 1
		fi
		sleep 0.1
	done
	echo "queen.sh: $1 did not answer $2/health within a minute" >&2
	exit 1
}

pg_port=$(free_port)
echo "queen.sh: PostgreSQL on 127.0.0.1:$pg_port, in $tmp" >&2
# $tmp/pg holds the data folder, the socket and the log: the server's user
# must own it.
pg="$tmp/pg"
install -d -m 700 "$pg"
if [ "$(id -u)" -eq 0 ]; then chown postgres: "$pg"; fi
as_pg "$pg_bin/initdb" -D "$pg/data" -U postgres --auth=trust -E UTF8 --no-locale >"$tmp/initdb.log" 2>&1
as_pg "$pg_bin/pg_ctl" -D "$pg/data" -l "$pg/postgres.log" -w -o "-p $pg_port -k $pg -c listen_addresses=127.0.0.1 \
	-c max_connections=400 -c max_wal_size=256MB -c min_wal_size=64MB \
	-c checkpoint_timeout=5min -c wal_compression=on -c autovacuum_naptime=15s" start >/dev/null
psql_pg() { psql -X -q -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"; }
psql_pg -c "CREATE DATABASE queen" -c "CREATE DATABASE lethe"

echo "queen.sh: building lethe and queenpeer" >&2
go build -o "$tmp/lethe" ./cmd/lethe
go build -o "$tmp/queenpeer" ./bench/queenpeer

queen_port=$(free_port)
(cd "$queen_dir" && exec env PORT="$queen_port" HOST=127.0.0.1 PG_HOST=127.0.0.1 PG_PORT="$pg_port" \
	PG_USER=postgres PG_PASSWORD=postgres PG_DB=queen LOG_LEVEL="${QUEEN_LOG_LEVEL:-warn}" \
	NUM_WORKERS="${NUM_WORKERS:-$((2 * $(nproc)))}" \
	FILE_BUFFER_DIR="$tmp/queen-buffers" \
	"$queen_bin" >"$tmp/queen.log" 2>&1) &
pids+=($!)
wait_healthy queen "http://127.0.0.1:$queen_port" "$!"

lethe_port=$(free_port)
env -u LETHE_AUTH_TOKEN -u LETHE_OPERATOR_TOKEN LOG_LEVEL="${LETHE_LOG_LEVEL:-warn}" \
	"$tmp/lethe" serve --host 127.0.0.1 --port "$lethe_port" \
	--database-url "postgres://postgres@127.0.0.1:$pg_port/lethe?sslmode=disable" \
	--data-dir "$tmp/lethe-data" >"$tmp/lethe.log" 2>&1 &
pids+=($!)
wait_healthy lethe "http://127.0.0.1:$lethe_port" "$!"

jsonl="$out/queenpeer-$(date -u +%Y%m%d-%H%M%S).jsonl"
echo "queen.sh: Queen at :$queen_port, lethe at :$lethe_port; $rounds rounds; results in $jsonl" >&2
declare -A url=([lethe]="http://127.0.0.1:$lethe_port" [queen]="http://127.0.0.1:$queen_port")
failed=0
for round in $(seq 1 "$rounds"); do
	for sys in lethe queen; do
		psql_pg -c CHECKPOINT
		echo "queen.sh: round $round, $sys" >&2
		# An incomplete run is reported (its line says why) and counted
		# below, not fatal: the other runs still tell something.
		"$tmp/queenpeer" -url "${url[$sys]}" -system "$sys" -json "$jsonl" "$@" || failed=$((failed + 1))
	done
done

# The mean of each system's runs, and the ratios. The JSON lines are
# queenpeer's (result.go): "push":{"msg_per_s":X,...},"pop_ack":{"msg_per_s":Y,...}.
sed -n 's/.*"system":"\([a-z]*\)".*"push":{"msg_per_s":\([^,]*\),.*"pop_ack":{"msg_per_s":\([^,]*\),.*"complete":\([a-z]*\).*/\1 \2 \3 \4/p' "$jsonl" |
	awk '{ push[$1] += $2; pop[$1] += $3; runs[$1]++; if ($4 != "true") bad++ }
	END {
		split("lethe queen", order, " ")
		for (i = 1; i <= 2; i++) {
			s = order[i]
			if (runs[s]) printf "queen.sh: %-5s %d runs: push %.0f msg/s, pop+ack %.0f msg/s (means)\n", s, runs[s], push[s]/runs[s], pop[s]/runs[s]
		}
		if (runs["lethe"] && runs["queen"] && pop["queen"] > 0 && push["queen"] > 0)
			printf "queen.sh: lethe / Queen: pop+ack %.2fx, push %.2fx\n", (pop["lethe"]/runs["lethe"]) / (pop["queen"]/runs["queen"]), (push["lethe"]/runs["lethe"]) / (push["queen"]/runs["queen"])
		if (bad) printf "queen.sh: %d runs incomplete: their rates do not measure a whole backlog\n", bad
	}'
if [ "$failed" -gt 0 ]; then
	echo "queen.sh: $failed queenpeer runs failed (logs in $out)" >&2
	exit 1
fi
