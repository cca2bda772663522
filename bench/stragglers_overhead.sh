#!/usr/bin/env bash
# The fault-free cost of straggler handling (status questions, probes of
# idle victims, duplicates) on loopback: nqueens on 4 node processes x 1
# worker, with it on and off in alternation, run by run, so that both see
# the same drift of a shared machine. Prints the median of the per-pair
# ratios (on / off) of wall time and of the CPU time of all nodes.
# Usage: bench/stragglers_overhead.sh [N-queens size] [pairs]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-16}
PAIRS=${2:-10}
cargo build --release -q -p satin-examples --bin nqueens
COMMON=(--local-nodes 4 --workers 1 --idle-timeout-ms 1000 --no-progress)
OFF=(--no-duplicates --soft-timeout 1000 --hard-timeout 2000)
expect=$(target/release/nqueens "$N" --workers 2 2>/dev/null)

# One supervised run: "seconds cpu-seconds" from the supervisor's last line.
run() {
    local err out
    err=$(mktemp)
    out=$(target/release/nqueens "$N" "${COMMON[@]}" "$@" 2>"$err") || true
    if [[ "$out" != "$expect" ]]; then
        echo "wrong answer '$out' (expected $expect) from: $*" >&2; cat "$err" >&2; exit 1
    fi
    grep -E 'local nodes, [0-9.]+ s, cpu time of all nodes' "$err" | tail -1 \
        | sed -E 's/.*local nodes, ([0-9.]+) s, cpu time of all nodes ([0-9.]+) s/\1 \2/'
    rm -f "$err"
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

tr=() cr=()
for i in $(seq "$PAIRS"); do
    # Alternate which goes first, so neither always runs on a warmer machine.
    if (( i % 2 )); then
        read -r t1 c1 < <(run); read -r t0 c0 < <(run "${OFF[@]}")
    else
        read -r t0 c0 < <(run "${OFF[@]}"); read -r t1 c1 < <(run)
    fi
    echo "pair $i: on $t1 s ($c1 s cpu), off $t0 s ($c0 s cpu)" >&2
    tr+=("$(awk -v a="$t1" -v b="$t0" 'BEGIN {print a / b}')")
    cr+=("$(awk -v a="$c1" -v b="$c0" 'BEGIN {print a / b}')")
done
echo "nqueens $N, 4 processes x 1 worker on loopback, $PAIRS pairs, $(nproc) cores"
echo "straggler handling on/off, median of per-pair ratios: time $(printf '%s\n' "${tr[@]}" | median), cpu $(printf '%s\n' "${cr[@]}" | median)"
