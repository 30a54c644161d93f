#!/usr/bin/env python3
"""The time and peak memory of `cutec check` and `cutec build` over fuzz corpora (issue 30: no input
of at most 100 KB may need more than 10 s or 2 GiB to check or build). Runs each file of the given
directories through both, one at a time, and prints the worst of each with its file, and how many
went past the bounds.

    python3 scripts/corpus_cost.py --cutec target/release/cutec fuzz/corpus/pipeline [MORE_DIRS...]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

SECONDS, MIB = 10.0, 2048


def run(cmd, limit):
    """Wall seconds and peak RSS (MiB) of one command; None for seconds when it ran past `limit`."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = start + limit
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            return time.monotonic() - start, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            p.kill()
            _, status, usage = os.wait4(p.pid, 0)
            return None, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)
        time.sleep(0.005)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cutec", required=True)
    ap.add_argument("--limit", type=float, default=120.0, help="kill a run after this many seconds")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    files = sorted(os.path.join(d, f) for d in a.dirs for f in os.listdir(d))
    files = [f for f in files if os.path.isfile(f) and os.path.getsize(f) <= 100 * 1024]
    out = tempfile.mkdtemp()
    worst = {}
    over = {"check": 0, "build": 0}
    crashes = []
    for f in files:
        for what, cmd in (
            ("check", [a.cutec, "check", f]),
            ("build", [a.cutec, "build", f, "-o", os.path.join(out, "k.cubin")]),
        ):
            secs, mib, rc = run(cmd, a.limit)
            if secs is not None and (rc < 0 or rc == 101):
                crashes.append((what, f, rc))
            t = secs if secs is not None else float("inf")
            w = worst.setdefault(what, {"time": (0, ""), "mem": (0, "")})
            if t > w["time"][0]:
                w["time"] = (t, f)
            if mib > w["mem"][0]:
                w["mem"] = (mib, f)
            if t > SECONDS or mib > MIB:
                over[what] += 1
    print(f"corpus-cost: {len(files)} files (<= 100 KB) from {' '.join(a.dirs)}")
    for what, w in worst.items():
        print(
            f"  {what}: worst {w['time'][0]:.2f} s ({w['time'][1]}), peak {w['mem'][0]:.0f} MiB ({w['mem'][1]}); "
            f"{over[what]} over {SECONDS:.0f} s or {MIB} MiB"
        )
    for what, f, rc in crashes:
        print(f"  CRASH: {what} {f}: exit {rc}")
    return 1 if crashes or any(over.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
