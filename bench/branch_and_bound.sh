#!/usr/bin/env bash
# The branch-and-bound tables of docs/results.md: for each instance, the
# answer, the nodes expanded and the time on 1 and 2 workers (one process)
# and on 4 local node processes (--local-nodes 4, 1 worker each), with the
# Held-Karp root gap for TSP. One run per cell (the searches are
# deterministic up to the order in which workers find tours).
# Usage: bench/branch_and_bound.sh [tsp|knapsack|all]
set -euo pipefail
cd "$(dirname "$0")/.."
WHAT=${1:-all}
cargo build --release -q -p satin-examples --bin tsp --bin knapsack
T=target/release
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One run: "answer seconds nodes" (nodes summed over every node process).
run() {
    local bin=$1; shift
    local start end
    start=$(date +%s.%N)
    "$T/$bin" "$@" --no-progress >"$tmp/out" 2>"$tmp/err"
    end=$(date +%s.%N)
    local answer nodes
    answer=$(grep -E '^[0-9.]+$' "$tmp/out" | tail -1)
    nodes=$(grep -o '[0-9]* nodes expanded on this node' "$tmp/err" | awk '{s += $1} END {print s}')
    printf '%s %.2f %s' "$answer" "$(echo "$end - $start" | bc)" "$nodes"
}

cell() { # answer seconds nodes -> "seconds s (nodes)"
    printf '%s s (%s)' "$2" "$3"
}

if [[ $WHAT == tsp || $WHAT == all ]]; then
    echo "| instance | n | optimum | found | root gap | 1 worker | 2 workers | 4 local nodes |"
    echo "|---|---|---|---|---|---|---|---|"
    tail -n +2 satin-examples/data/tsp/optima.tsv | while IFS=$'\t' read -r name n _ optimum _; do
        f=satin-examples/data/tsp/$name.tsp
        read -r a1 s1 n1 <<<"$(run tsp "$f" --workers 1)"
        gap=$(grep -o 'root bound [0-9.]* ([0-9.]* %' "$tmp/err" | head -1 | sed 's/.*(\([0-9.]*\) %/\1 %/')
        read -r a2 s2 n2 <<<"$(run tsp "$f" --workers 2)"
        read -r a4 s4 n4 <<<"$(run tsp "$f" --local-nodes 4 --workers 1)"
        found=$a2
        [[ $a1 == "$optimum" && $a2 == "$optimum" && $a4 == "$optimum" ]] || found="$a1/$a2/$a4 (wrong)"
        echo "| $name | $n | $optimum | $found | $gap | $(cell "$a1" "$s1" "$n1") | $(cell "$a2" "$s2" "$n2") | $(cell "$a4" "$s4" "$n4") |"
    done
fi

# The depth-first searches, 2 workers, or "> LIMIT s".
within() {
    local limit=$1 f=$2 bound=$3
    if timeout "$limit" "$T/knapsack" "$f" --bound "$bound" --workers 2 --no-progress >/dev/null 2>&1; then
        read -r a s n <<<"$(run knapsack "$f" --bound "$bound" --workers 2)"
        cell "$a" "$s" "$n"
    else
        echo "> $limit s"
    fi
}

if [[ $WHAT == knapsack || $WHAT == all ]]; then
    echo
    echo "| family (type) | items | answer | root gap (U2 − optimum) | sequential | 1 worker | 2 workers | 4 local nodes | depth first (martello-toth), 2 workers | Dantzig search, 2 workers |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for items in 1000 10000; do
        for t in 3 4 11 12 13 14 15 16; do
            f=$tmp/kp_${t}_$items
            "$T/knapsack" --generate "$t,$items,1000,50,100" >"$f"
            read -r aq sq nq <<<"$(run knapsack "$f" --sequential)"
            gap=$(grep -o 'root bound U2 [0-9.]* ([0-9.]* above' "$tmp/err" | sed 's/.*(\([0-9.]*\) above/\1/')
            read -r a1 s1 n1 <<<"$(run knapsack "$f" --workers 1)"
            read -r a2 s2 n2 <<<"$(run knapsack "$f" --workers 2)"
            read -r a4 s4 n4 <<<"$(run knapsack "$f" --local-nodes 4 --workers 1)"
            answer=$aq
            [[ $aq == "$a1" && $a1 == "$a2" && $a2 == "$a4" ]] || answer="$aq/$a1/$a2/$a4 (differ)"
            echo "| $t | $items | $answer | $gap | $(cell "$aq" "$sq" "$nq") | $(cell "$a1" "$s1" "$n1") | $(cell "$a2" "$s2" "$n2") | $(cell "$a4" "$s4" "$n4") | $(within 60 "$f" martello-toth) | $(within 20 "$f" dantzig) |"
        done
    done
fi
