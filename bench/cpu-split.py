#!/usr/bin/env python3
"""Where the cores go: CPU seconds per second of wall, by process, over a window.

    python3 bench/cpu-split.py SECONDS

Samples /proc before and after SECONDS and prints the busiest processes
(PostgreSQL backends grouped by their database and user, every other process
by its name), then the total. Run it while a benchmark window is measured,
for instance beside `go run ./bench -only lethe -scenarios latency`.
"""
import collections
import os
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def name_of(pid):
    stat = open(f"/proc/{pid}/stat").read()
    comm = stat[stat.index("(") + 1:stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2:].split()
    ticks = int(fields[11]) + int(fields[12])  # utime + stime
    if comm.startswith("postgres"):
        cmd = open(f"/proc/{pid}/cmdline").read().replace("\0", " ").strip()
        # "postgres: user db host(port) STATE" for a backend, "postgres: walwriter" ...
        comm = "postgres: " + " ".join(cmd.split(":", 1)[1].split()[:2]) if ":" in cmd else "postgres"
    return comm, ticks


def sample():
    out = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                out[pid] = name_of(pid)
            except (OSError, ValueError, IndexError):
                pass  # gone meanwhile
    return out


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    before, start = sample(), time.time()
    time.sleep(seconds)
    after, wall = sample(), time.time() - start
    busy = collections.Counter()
    for pid, (name, ticks) in after.items():
        busy[name] += (ticks - before.get(pid, (name, 0))[1]) / TICK / wall
    for name, cores in busy.most_common(8):
        print(f"{cores:6.2f}  {name}")
    print(f"{sum(busy.values()):6.2f}  total, of {os.cpu_count()} cores, over {wall:.1f} s")


if __name__ == "__main__":
    main()
