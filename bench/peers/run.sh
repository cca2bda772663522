#!/usr/bin/env bash
# Merge sort of 5 M numbers on three local processes: this project
# (`mergesort N --local-nodes 3`, the whole command: processes started,
# input made, sorted, checked) against Ray and Dask (warm clusters of three
# worker processes; the input made inside each run), on this machine.
#
#   bench/peers/run.sh [N] [ROUNDS]     # defaults: 5000000 5
#
# Ray, Dask and numpy are installed from the Python package registry into
# target/peers-venv the first time (about 1 GB; needs python3 with venv).
# Prints each engine's times, its median, and the median's ratio to ours.
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-5000000}
rounds=${2:-5}
venv=target/peers-venv
if [[ ! -x $venv/bin/python ]]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check ray "dask[distributed]" numpy
fi
cargo build --release --quiet -p satin-examples --bin mergesort
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
satin=()
for _ in $(seq "$rounds"); do
    start=$(date +%s.%N)
    target/release/mergesort "$n" --local-nodes 3 --no-progress >/dev/null 2>&1
    end=$(date +%s.%N)
    satin+=("$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')")
done
ours=$(median "${satin[@]}")
echo "satin (3 local nodes, whole command): ${satin[*]}  median $ours s"
for engine in ray dask; do
    times=$("$venv/bin/python" bench/peers/mergesort.py "$engine" "$n" --rounds "$rounds" --workers 3 2>/dev/null | awk '{ print $2 }')
    # shellcheck disable=SC2086
    m=$(median $times)
    echo "$engine (3 worker processes, warm): $(echo $times)  median $m s  ($engine / satin $(awk -v a="$ours" -v b="$m" 'BEGIN { printf "%.2f", b / a }'))"
done
