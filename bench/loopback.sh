#!/usr/bin/env bash
# Distributed runs on loopback: 4 node processes x 1 worker, ratios from one
# invocation. Usage: bench/loopback.sh [N-queens size] [repetitions]
# Prints a Markdown table for docs/results.md.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-16}
REPS=${2:-3}
cargo build --release -q -p satin-examples --bin nqueens
BIN=target/release/nqueens
COMMON=(--workers 1 --idle-timeout-ms 1000 --no-progress)

# One run: prints "seconds cpu-seconds" of the run with the faults (the
# supervisor's last line), checking the answer.
run() {
    local expect=$1; shift
    local err out
    err=$(mktemp)
    out=$("$BIN" "$N" "$@" "${COMMON[@]}" 2>"$err")
    if [[ "$out" != "$expect" ]]; then
        echo "wrong answer '$out' (expected $expect) from: $*" >&2; cat "$err" >&2; exit 1
    fi
    grep -E 'local nodes, [0-9.]+ s, cpu time of all nodes' "$err" | tail -1 \
        | sed -E 's/.*local nodes, ([0-9.]+) s, cpu time of all nodes ([0-9.]+) s/\1 \2/'
    rm -f "$err"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

expect=$("$BIN" "$N" --workers 2 2>/dev/null)
seq_s=$( { for _ in $(seq "$REPS"); do "$BIN" "$N" --sequential 2>&1 >/dev/null | sed -E 's/.*sequential, ([0-9.]+) s/\1/'; done; } | median)

declare -A T C
scenario() {
    local name=$1; shift
    local ts=() cs=()
    for _ in $(seq "$REPS"); do
        read -r t c < <(run "$expect" "$@")
        ts+=("$t"); cs+=("$c")
    done
    T[$name]=$(printf '%s\n' "${ts[@]}" | median)
    C[$name]=$(printf '%s\n' "${cs[@]}" | median)
}

scenario ft     --local-nodes 4
scenario noft   --local-nodes 4 --ft none
scenario three  --local-nodes 3
scenario kill   --local-nodes 4 --chaos 'kill:node=2,at=50%'
scenario master --local-nodes 4 --chaos 'kill:node=0,at=50%'
scenario naive  --local-nodes 4 --ft naive --chaos 'kill:node=2,at=50%'

r() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
echo "nqueens $N, 4 processes x 1 worker on loopback, median of $REPS, $(nproc) cores; sequential $seq_s s"
echo
echo "| run | time (s) | cpu of all nodes (s) | ratio |"
echo "|---|---|---|---|"
echo "| fault tolerance on (table), no faults | ${T[ft]} | ${C[ft]} | 1.000 |"
echo "| --ft none, no faults | ${T[noft]} | ${C[noft]} | on/off $(r "${T[ft]}" "${T[noft]}") |"
echo "| 3 nodes from the start | ${T[three]} | ${C[three]} | |"
echo "| kill 1 of 4 (a worker) at 50 % | ${T[kill]} | ${C[kill]} | vs 3 from start $(r "${T[kill]}" "${T[three]}") |"
echo "| kill the master at 50 % | ${T[master]} | ${C[master]} | vs 3 from start $(r "${T[master]}" "${T[three]}") |"
echo "| kill 1 of 4 at 50 %, --ft naive | ${T[naive]} | ${C[naive]} | vs 3 from start $(r "${T[naive]}" "${T[three]}") |"
echo
echo "Redundant work (cpu of the faulty run over the fault-free one, minus 1): worker killed $(awk -v a="${C[kill]}" -v b="${C[ft]}" 'BEGIN {printf "%.1f %%", (a / b - 1) * 100}'), master killed $(awk -v a="${C[master]}" -v b="${C[ft]}" 'BEGIN {printf "%.1f %%", (a / b - 1) * 100}')."
