#!/usr/bin/env bash
# One process against three local nodes, in turn: `bench/pairs.sh N CMD...`
# runs CMD (with --no-progress) N times each way, alternating, and prints
# one line per pair — seconds in one process, seconds on
# `--local-nodes 3`, their ratio — then the medians.
#
#   bench/pairs.sh 5 target/release/kdtree 1000000 --radius 0.002 --build
set -euo pipefail
if [[ $# -lt 2 || ! $1 =~ ^[0-9]+$ ]]; then
    echo "usage: bench/pairs.sh N CMD [ARGS...]" >&2
    exit 2
fi
n=$1
shift
seconds() {
    local start end
    start=$(date +%s.%N)
    "$@" --no-progress >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { print b - a }'
}
ones=() threes=()
for _ in $(seq "$n"); do
    one=$(seconds "$@")
    three=$(seconds "$@" --local-nodes 3)
    ones+=("$one") threes+=("$three")
    printf '%.2f %.2f %.2fx\n' "$one" "$three" "$(awk -v a="$one" -v b="$three" 'BEGIN { print b / a }')"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
m1=$(median "${ones[@]}") m3=$(median "${threes[@]}")
printf 'median %.2f %.2f %.2fx\n' "$m1" "$m3" "$(awk -v a="$m1" -v b="$m3" 'BEGIN { print b / a }')"
