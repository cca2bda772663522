#!/usr/bin/env python3
"""The "Programs that move data" figures of docs/results.md.

For each data-carrying example: one process (all cores) against
`--local-nodes 3` (wall time, bytes sent per node, removals, processes that
printed the answer), then the same with each node killed at 50 %; by hand
(one `--listen`, two `--join`) with a joiner killed once it runs a stolen
job, 5 runs; the master killed at 5 %, 20 % and 50 % of a 0.1 s run, 10 runs
each; and the gaps between beats as the nodes read them during the runs.

Usage: python3 bench/data.py [--quick]   (run from anywhere; builds first)
"""

import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T = os.path.join(ROOT, "target", "release")
QUICK = "--quick" in sys.argv

EXAMPLES = [
    ("mergesort 5000000", ["mergesort", "5000000"]),
    ("barnes_hut --bodies 100000 --steps 1", ["barnes_hut", "--bodies", "100000", "--steps", "1"]),
    ("raytracer --width 2000 --height 1500 --samples 3",
     ["raytracer", "--width", "2000", "--height", "1500", "--samples", "3"]),
]


def run(args, env=None):
    """Runs a command; (seconds, stdout, stderr, returncode)."""
    start = time.time()
    p = subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT)
    return time.time() - start, p.stdout, p.stderr, p.returncode


def cluster(cmd, extra=()):
    """`cmd` on 3 local nodes: (seconds, answer, stats json, stderr)."""
    with tempfile.TemporaryDirectory() as d:
        stats = os.path.join(d, "stats.json")
        secs, out, err, rc = run([os.path.join(T, cmd[0])] + cmd[1:] +
                                 ["--local-nodes", "3", "--no-progress", "--stats-json", stats] + list(extra))
        data = json.load(open(stats)) if os.path.exists(stats) else {"nodes": []}
    return secs, out.strip(), data, err, rc


def printed(err):
    """How many nodes the supervisor says printed the answer."""
    line = next((l for l in err.splitlines() if "how the nodes ended" in l), "")
    return line.count("printed the answer")


def main():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "satin-examples"], cwd=ROOT, check=True)
    print("| program | one process | 3 local nodes | ratio | bytes sent per node (MB) | removals | printed | beat gap p99 / max (ms) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, cmd in EXAMPLES:
        one, answer1, _, _ = run([os.path.join(T, cmd[0])] + cmd[1:] + ["--no-progress"])
        secs, answer, data, err, rc = cluster(cmd)
        nodes = data["nodes"]
        sent = " / ".join(f'{n["bytes_sent"] / 1e6:.1f}' for n in sorted(nodes, key=lambda n: n["node"]))
        removals = sum(n["stats"]["removals"] for n in nodes)
        gaps = max((n.get("beat_gaps_ms", {}).get("p99", 0) for n in nodes), default=0)
        gmax = max((n.get("beat_gaps_ms", {}).get("max", 0) for n in nodes), default=0)
        same = "" if answer == answer1.strip() else " (answers differ!)"
        print(f"| `{name}` | {one:.2f} s | {secs:.2f} s | {secs / one:.1f} × | {sent} | {removals} | "
              f"{printed(err)}{same} | {gaps:.0f} / {gmax:.0f} |")
    print()
    print("Each node killed at 50 % (`--chaos kill:node=N,at=50%`): right answer, processes that printed it")
    print()
    print("| program | node 0 | node 1 | node 2 |")
    print("|---|---|---|---|")
    for name, cmd in EXAMPLES:
        one_answer = run([os.path.join(T, cmd[0])] + cmd[1:] + ["--no-progress"])[1].strip()
        cells = []
        for node in range(3):
            _, answer, _, err, rc = cluster(cmd, ["--chaos", f"kill:node={node},at=50%"])
            ok = "right" if answer == one_answer and rc == 0 else "WRONG"
            cells.append(f"{ok}, {printed(err)}")
        print(f"| `{name}` | " + " | ".join(cells) + " |")
    print()
    by_hand()
    print()
    early_kills()


def by_hand():
    """One --listen and two --join of mergesort, a joiner killed once it
    runs a stolen job: how many processes printed, 5 runs."""
    runs = 2 if QUICK else 5
    n = "2000000"
    want = run([os.path.join(T, "mergesort"), n, "--no-progress"])[1].strip()
    results = []
    with tempfile.TemporaryDirectory() as d:
        pool = os.path.join(d, "pool.pem")
        run([os.path.join(T, "mergesort"), "--init-pool", pool])
        for _ in range(runs):
            env = dict(os.environ, RUST_LOG="satin_net::driver=debug")
            first = subprocess.Popen([os.path.join(T, "mergesort"), n, "--listen", "127.0.0.1:0", "--workers", "1",
                                      "--pool", pool], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            addr = None
            for line in first.stderr:
                if "listening on " in line:
                    addr = line.split("listening on ")[1].strip()
                    break
            join = [os.path.join(T, "mergesort"), n, "--join", addr, "--listen", "127.0.0.1:0", "--workers", "1",
                    "--pool", pool]
            joiners = [subprocess.Popen(join, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                       for _ in range(2)]
            for line in joiners[0].stderr:
                if "running a job stolen from" in line:
                    joiners[0].kill()
                    break
            outs = [p.communicate(timeout=300)[0].strip() for p in [first] + joiners]
            results.append((sum(1 for o in outs if o), outs[0] == want))
    print(f"By hand (one `--listen`, two `--join`, `mergesort {n}`, joiner 1 killed once it runs a stolen job), "
          f"{runs} runs: processes that printed the answer {[r[0] for r in results]}, "
          f"right answer {sum(r[1] for r in results)} of {runs}")


def early_kills():
    """The master killed at 5, 20 and 50 % of `nqueens 13 --local-nodes 4`
    (about 0.1 s), 10 runs each: right answers."""
    runs = 3 if QUICK else 10
    print("| master killed at | right answers |")
    print("|---|---|")
    for at in ["5%", "20%", "50%"]:
        right = 0
        for _ in range(runs):
            _, out, _, rc = run([os.path.join(T, "nqueens"), "13", "--local-nodes", "4", "--no-progress",
                                 "--chaos", f"kill:node=0,at={at}"])
            right += out.strip() == "73712" and rc == 0
        print(f"| {at} | {right} of {runs} |")


if __name__ == "__main__":
    main()
