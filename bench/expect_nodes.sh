#!/usr/bin/env bash
# Three nodes started by hand with --expect-nodes 3 (one --listen, two
# --join, all at once), the listener SIGKILLed MS milliseconds after they
# start: how often the two others print the answer exactly once, and how
# long they take against the same start without a kill.
#
#   bench/expect_nodes.sh [RUNS] [N]      (default: 10 runs of nqueens 14)
#
# Prints one markdown row per kill moment.
set -euo pipefail
runs=${1:-10}
n=${2:-14}
bin=target/release/nqueens
declare -A want=([12]=14200 [13]=73712 [14]=365596 [15]=2279184 [16]=14772512)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$bin" --init-pool "$scratch/pool" 2>/dev/null
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
free_port() { python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# One run: the listener killed at $1 ms ("none": not killed). Prints
# "ANSWERS SECONDS": answer lines of the survivors, and the time until
# the last of them ended.
one() {
    local addr="127.0.0.1:$(free_port)" pids=() start end answers=0
    start=$(date +%s.%N)
    for i in 0 1 2; do
        local how=--join
        [[ $i == 0 ]] && how=--listen
        "$bin" "$n" "$how" "$addr" --expect-nodes 3 --workers 1 --pool "$scratch/pool" --no-progress \
            >"$scratch/out$i" 2>"$scratch/err$i" &
        pids+=($!)
    done
    if [[ $1 != none ]]; then
        sleep "$(awk -v ms="$1" 'BEGIN { printf "%.3f", ms / 1000 }')"
        kill -9 "${pids[0]}" 2>/dev/null || true
    fi
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    end=$(date +%s.%N)
    local from=1
    [[ $1 == none ]] && from=0
    for i in $(seq $from 2); do
        answers=$((answers + $(grep -c "^${want[$n]}\$" "$scratch/out$i" || true)))
        answers=$((answers + $(grep -vc "^${want[$n]}\$" "$scratch/out$i" || true) * 100))
    done
    echo "$answers $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')"
}

free=()
for _ in $(seq "$runs"); do free+=("$(one none | cut -d' ' -f2)"); done
mf=$(median "${free[@]}")
echo "| listener killed at | right once | median run (s) | median fault-free (s) | ratio |"
echo "|---|---|---|---|---|"
for ms in 1 10 30 100; do
    ok=0 took=()
    for _ in $(seq "$runs"); do
        read -r answers t <<<"$(one "$ms")"
        [[ $answers == 1 ]] && ok=$((ok + 1))
        took+=("$t")
    done
    mt=$(median "${took[@]}")
    echo "| $ms ms | $ok/$runs | $mt | $mf | $(awk -v a="$mt" -v b="$mf" 'BEGIN { printf "%.2f", a / b }') |"
done
