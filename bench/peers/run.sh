#!/usr/bin/env bash
# This project against Ray and Dask on this machine, three worker
# processes of one CPU each (`--local-nodes 3 --workers 1` against
# `peers.py`'s clusters), on the workloads of `peers.py`: N-queens
# (compute), a merge sort (data), a k-d tree queried by many tasks (a
# shared read-only structure), fib with a task per call (per-task
# overhead), and N-queens with a worker process and with the head killed
# (SIGKILL) half-way (half the fault-free median of each engine; ours
# `--chaos kill:node=1|0,at=<ms>`).
#
#   bench/peers/run.sh [ROUNDS] [WORKLOAD...]   # defaults: 5, every workload
#   bench/peers/run.sh 5 sort                   # only the merge sort
#   FIB_N=16 bench/peers/run.sh 3 fib           # fib of another size (22 by default)
#   ENGINES=dask bench/peers/run.sh 3 fib       # one engine only
#
# Ray, Dask, numpy, numba, scipy and psutil are installed from the Python
# package registry into target/peers-venv the first time (about 1 GB;
# needs python3 with venv). Prints a markdown table: for ours the whole
# command (processes started, input made, answer checked) — a node
# starts in a few milliseconds, so a warm run of ours is the same less
# ~0.03 s (`nqueens 4`'s whole command, printed first) — and for Ray and
# Dask the whole command (interpreter, imports, cluster start, first run)
# and the warm cluster's rounds; medians and their ratio to ours.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-5}
shift || true
workloads=("$@")
[[ ${#workloads[@]} -gt 0 ]] || workloads=(nqueens sort kdtree fib kill-worker kill-head)
venv=target/peers-venv
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c "import ray, distributed, numba, scipy, psutil" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check ray "dask[distributed]" numpy numba scipy psutil
fi
cargo build --release --quiet -p satin-examples --bin nqueens --bin mergesort --bin kdtree --bin fib

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b / a }'; }

# Each workload: our command and the arguments of peers.py.
ours_cmd() {
    case $1 in
        nqueens | kill-*) echo "target/release/nqueens 16" ;;
        sort) echo "target/release/mergesort 5000000" ;;
        kdtree) echo "target/release/kdtree 1000000 --radius 0.002" ;;
        fib) echo "target/release/fib ${FIB_N:-22}" ;;
    esac
}
peers_args() {
    case $1 in
        nqueens) echo "nqueens 16" ;;
        kill-worker) echo "nqueens 16 --rounds 1 --kill worker" ;;
        kill-head) echo "nqueens 16 --rounds 1 --kill head" ;;
        sort) echo "sort 5000000" ;;
        kdtree) echo "kdtree 1000000 --radius 0.002" ;;
        fib) echo "fib ${FIB_N:-22}" ;;
    esac
}
# Half-way in time, as for Ray and Dask (half the fault-free median):
# `at=50%` would make the supervisor time a fault-free run first.
chaos() {
    case $1 in
        kill-worker) echo "kill:node=1,at=${half_ms}ms" ;;
        kill-head) echo "kill:node=0,at=${half_ms}ms" ;;
    esac
}

# One whole command of ours: its wall time and the answer it printed.
whole() {
    local start end out
    start=$(date +%s.%N)
    out=$("$@" --local-nodes 3 --workers 1 --no-progress 2>/dev/null | tail -1)
    end=$(date +%s.%N)
    echo "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }') $out"
}

read -r start_cost _ < <(whole target/release/nqueens 4)
echo "A whole command of ours that does nothing (nqueens 4): $start_cost s"
half_ms=
if [[ " ${workloads[*]} " == *" kill-"* && " ${workloads[*]} " != *" nqueens "* ]]; then
    # shellcheck disable=SC2046
    read -r t _ < <(whole $(ours_cmd nqueens))
    half_ms=$(awk -v t="$t" 'BEGIN { printf "%d", t * 500 }')
fi
echo
echo "| workload | engine | whole command (s) | warm rounds (s) | median | ÷ ours | answer |"
echo "|---|---|---|---|---|---|---|"
for w in "${workloads[@]}"; do
    # shellcheck disable=SC2046
    set -- $(ours_cmd "$w")
    times=()
    answer=
    kill_rounds=$rounds
    [[ $w == kill-* ]] && kill_rounds=$(( (rounds + 1) / 2 ))
    for _ in $(seq "$kill_rounds"); do
        if [[ $w == kill-* ]]; then
            read -r t answer < <(whole "$@" --chaos "$(chaos "$w")")
        else
            read -r t answer < <(whole "$@")
        fi
        times+=("$t")
    done
    ours=$(median "${times[@]}")
    [[ $w == nqueens ]] && half_ms=$(awk -v t="$ours" 'BEGIN { printf "%d", t * 500 }')
    echo "| $w | satin | ${times[*]} | — | $ours | 1 | $answer |"
    for engine in ${ENGINES:-ray dask}; do
        # shellcheck disable=SC2046
        out=$("$venv/bin/python" bench/peers/peers.py "$engine" $(peers_args "$w") --rounds "$rounds" 2>/dev/null || true)
        cold=$(awk '$1 == "cold" { print $2 }' <<<"$out")
        if [[ $w == kill-* ]]; then
            line=$(awk '$1 ~ /^killed-/ { $1 = ""; print }' <<<"$out")
            read -r t rest <<<"$line"
            if [[ $t == - ]]; then
                echo "| $w | $engine | $cold | — | no answer | — | $rest |"
            else
                echo "| $w | $engine | $cold | — | $t | $(ratio "$ours" "$t") | $rest |"
            fi
            continue
        fi
        warm=$(awk '$1 == "warm" { print $2 }' <<<"$out" | xargs)
        ans=$(awk '$1 == "warm" { a = $3 } END { print a }' <<<"$out")
        # shellcheck disable=SC2086
        m=$(median $warm)
        echo "| $w | $engine | $cold | $warm | $m | $(ratio "$ours" "$m") | $ans |"
    done
done
