#!/usr/bin/env bash
# The master's workers hang at a share of the run: how often the answer
# comes, and how long the run takes against the fault-free one.
#
#   bench/hung_master.sh [RUNS] [N...]      (default: 10 runs of nqueens 14 and 15)
#
# Prints one markdown row per (N, share): right answers, the median time
# of the faulty run ("distributed run" of the node that printed) and the
# median fault-free time the supervisor measured for the percentages.
set -euo pipefail
runs=${1:-10}
shift || true
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(14 15)
bin=target/release/nqueens
declare -A want=([13]=73712 [14]=365596 [15]=2279184 [16]=14772512)
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "| nqueens | hang at | right | median run (s) | median fault-free (s) | ratio |"
echo "|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do
    for at in 5 30 60 90; do
        ok=0 took=() free=()
        for _ in $(seq "$runs"); do
            log=$(timeout 120 "$bin" "$n" --local-nodes 3 --no-progress --chaos "hang:node=0,at=$at%" 2>&1) || true
            [[ $(printf '%s\n' "$log" | tail -1) == "${want[$n]}" ]] && ok=$((ok + 1))
            t=$(printf '%s\n' "$log" | sed -n 's/.*distributed run, \([0-9.]*\) s.*/\1/p' | tail -1)
            f=$(printf '%s\n' "$log" | sed -n 's/.*the run takes \([0-9.]*\) s without faults.*/\1/p' | tail -1)
            [[ -n $t ]] && took+=("$t")
            [[ -n $f ]] && free+=("$f")
        done
        mt=$(median "${took[@]:-0}") mf=$(median "${free[@]:-0}")
        echo "| $n | $at % | $ok/$runs | $mt | $mf | $(awk -v a="$mt" -v b="$mf" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }') |"
    done
done
