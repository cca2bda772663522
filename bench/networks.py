#!/usr/bin/env python3
"""Real runs on a failing network: the table of docs/results.md, "Real networks".

Usage: bench/networks.py [N-queens size] [runs of the lossy scenarios] [runs of the others]

Three nodes of one worker each (`--local-nodes 3 --workers 1`; node 0 starts
as master) solve N-queens while the fault layer of their UDP sockets
(`--chaos`) loses, delays or cuts packets. Each line of the supervisor's log
is timed as it arrives, which gives, per run:

- the answer the command printed (right or not), and which processes ended
  as master having printed it (more than one would be a split brain);
- how each node ended (the supervisor's "how the nodes ended" line);
- the time from start to answer against the fault-free runs;
- detection: from the fault to the first removal the majority decided;
- false removals: live nodes removed under loss or delay (the faults that
  cut nobody off).

Only the standard library; the nqueens binary is built first.
"""

import os
import re
import statistics
import subprocess
import sys
import threading
import time

N = sys.argv[1] if len(sys.argv) > 1 else "16"
LOSSY_RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 10
RUNS = int(sys.argv[3]) if len(sys.argv) > 3 else 3
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "nqueens")
ANSWERS = {"14": "365596", "15": "2279184", "16": "14772512", "17": "95815104"}

# (name, --chaos, lossy?) — lossy ones run LOSSY_RUNS times.
SCENARIOS = [
    ("no faults", None, False),
    ("5 % loss", "loss:0.05", True),
    ("20 % loss", "loss:0.2", True),
    ("30 % loss", "loss:0.3", True),
    ("100 ± 50 ms delay, reordering", "delay:50,jitter=100", True),
    ("node 2 cut off for 2 s", "partition:node=2,at=2s,for=2s", False),
    ("node 2 cut off for 5 s", "partition:node=2,at=2s,for=5s", False),
    ("node 2 cut off for good", "partition:node=2,at=2s", False),
    ("master cut off for good", "partition:node=0,at=2s", False),
    ("link master-node 2 cut", "cut:0-2,at=2s", False),
    ("node 2 dies silently", "vanish:node=2,at=2s", False),
]


def run(chaos):
    """One supervised run; returns what the table needs."""
    args = [BIN, N, "--local-nodes", "3", "--workers", "1", "--no-progress"]
    if chaos:
        args += ["--chaos", chaos]
    env = dict(os.environ, RUST_LOG="satin_net=info")
    start = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    lines = []

    def read():
        for line in p.stderr:
            lines.append((time.monotonic() - start, line.rstrip("\n")))

    reader = threading.Thread(target=read)
    reader.start()
    out = p.stdout.read().strip()
    p.wait()
    reader.join()
    fault_at = next((t for t, l in lines if "chaos:" in l and "calibration" not in l), None)
    removed_at = next((t for t, l in lines if "is out of the run" in l), None)
    master_lines = [l for _, l in lines if l.endswith("the run is over; this node is its master")]
    masters = sorted({re.match(r"\[node (\d+)\]", l).group(1) for l in master_lines if l.startswith("[node")})
    exits = next((l.split("how the nodes ended: ", 1)[1] for _, l in lines if "how the nodes ended: " in l), "?")
    took = next((float(m.group(1)) for _, l in lines for m in [re.search(r"local nodes, ([0-9.]+) s", l)] if m), None)
    removals = sum(int(m.group(1)) for _, l in lines for m in [re.search(r"removals (\d+)$", l)] if m)
    return {
        "right": out == ANSWERS.get(N),
        "status": p.returncode,
        "masters": masters,
        "exits": exits,
        "took": took,
        "detect": (removed_at - fault_at) if (removed_at and fault_at) else None,
        "removals": removals,
    }


def main():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "satin-examples", "--bin", "nqueens"], cwd=ROOT, check=True)
    print(f"nqueens {N}, 3 local nodes x 1 worker, `bench/networks.py {N} {LOSSY_RUNS} {RUNS}`\n")
    print("| scenario | runs | right answers | processes that answered as master | node exits (last run) | time / fault-free | detection | removals of live nodes |")
    print("|---|---|---|---|---|---|---|---|")
    base = None
    for name, chaos, lossy in SCENARIOS:
        results = [run(chaos) for _ in range(LOSSY_RUNS if lossy else RUNS)]
        times = [r["took"] for r in results if r["took"]]
        mean = statistics.mean(times) if times else float("nan")
        if chaos is None:
            base = mean
        right = sum(r["right"] for r in results)
        per_run = sorted({len(r["masters"]) for r in results})
        who = " or ".join(sorted({m for r in results for m in r["masters"]}))
        answered = f"{'/'.join(map(str, per_run))} per run (node {who or '-'})"
        ratio = f"{mean / base:.2f}" if base else "?"
        detects = [r["detect"] for r in results if r["detect"] is not None]
        detect = f"{statistics.mean(detects):.2f} s" if detects else "—"
        cut_off = chaos is not None and not lossy
        false = "—" if cut_off else str(sum(r["removals"] for r in results))
        print(f"| {name} | {len(results)} | {right}/{len(results)} | {answered} | {results[-1]['exits']} | {ratio} ({mean:.2f} s) | {detect} | {false} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
