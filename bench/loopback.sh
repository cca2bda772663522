#!/usr/bin/env bash
# Distributed runs on loopback: 4 node processes x 1 worker, ratios from one
# invocation.
# Usage: bench/loopback.sh [N-queens size] [repetitions] [raytracer side] [rays per pixel, per axis]
# Prints Markdown tables for docs/results.md.
#
# Crashes: a worker or the master killed (SIGKILL), against 3 nodes from the
# start. Checkpoints: their fault-free cost at a 1 s interval; every node
# killed half-way, then the same command resumes; a suspend half-way, then
# the same command resumes. CPU is that of all node processes, killed ones
# included; for the interrupted runs it sums both halves.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-16}
REPS=${2:-3}
RT=${3:-3000}
SAMPLES=${4:-5}
cargo build --release -q -p satin-examples --bin nqueens --bin raytracer
COMMON=(--workers 1 --idle-timeout-ms 1000 --no-progress)
CKPT=$(mktemp -d)
trap 'rm -rf "$CKPT"' EXIT

# One supervised run: prints "seconds cpu-seconds" (the supervisor's last
# line). With an expected answer, checks it; with "-", expects none.
run() {
    local expect=$1; shift
    local err out
    err=$(mktemp)
    out=$("${BIN[@]}" "$@" "${COMMON[@]}" 2>"$err") || true
    if [[ "$expect" != "-" && "$out" != "$expect" ]]; then
        echo "wrong answer '$out' (expected $expect) from: $*" >&2; cat "$err" >&2; exit 1
    fi
    grep -E 'local nodes, [0-9.]+ s, cpu time of all nodes' "$err" | tail -1 \
        | sed -E 's/.*local nodes, ([0-9.]+) s, cpu time of all nodes ([0-9.]+) s/\1 \2/'
    rm -f "$err"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

declare -A T C
# scenario NAME ANSWER ARGS...: medians of REPS runs.
scenario() {
    local name=$1 expect=$2; shift 2
    local ts=() cs=()
    for _ in $(seq "$REPS"); do
        read -r t c < <(run "$expect" "$@")
        ts+=("$t"); cs+=("$c")
    done
    T[$name]=$(printf '%s\n' "${ts[@]}" | median)
    C[$name]=$(printf '%s\n' "${cs[@]}" | median)
}

# interrupted NAME ANSWER CHAOS ARGS...: a run cut by CHAOS, then the same
# command without it; medians of the sums of both halves.
interrupted() {
    local name=$1 expect=$2 chaos=$3; shift 3
    local ts=() cs=()
    for i in $(seq "$REPS"); do
        local file="$CKPT/$name.$i.ckpt"
        read -r t1 c1 < <(run - "$@" --checkpoint "$file" --checkpoint-interval 1s --chaos "$chaos")
        read -r t2 c2 < <(run "$expect" "$@" --checkpoint "$file" --checkpoint-interval 1s)
        ts+=("$(awk -v a="$t1" -v b="$t2" 'BEGIN {print a + b}')")
        cs+=("$(awk -v a="$c1" -v b="$c2" 'BEGIN {print a + b}')")
    done
    T[$name]=$(printf '%s\n' "${ts[@]}" | median)
    C[$name]=$(printf '%s\n' "${cs[@]}" | median)
}

# paired PLAIN CKPT ANSWER ARGS...: without and with checkpoints every
# second, alternately, run by run.
paired() {
    local plain=$1 ckpt=$2 expect=$3; shift 3
    local pt=() pc=() ct=() cc=()
    for i in $(seq "$REPS"); do
        read -r t c < <(run "$expect" "$@"); pt+=("$t"); pc+=("$c")
        read -r t c < <(run "$expect" "$@" --checkpoint "$CKPT/$ckpt.$i.ckpt" --checkpoint-interval 1s)
        ct+=("$t"); cc+=("$c")
    done
    T[$plain]=$(printf '%s\n' "${pt[@]}" | median); C[$plain]=$(printf '%s\n' "${pc[@]}" | median)
    T[$ckpt]=$(printf '%s\n' "${ct[@]}" | median); C[$ckpt]=$(printf '%s\n' "${cc[@]}" | median)
}

r() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f %%", (a / b - 1) * 100}'; }

BIN=(target/release/nqueens "$N")
expect=$(target/release/nqueens "$N" --workers 2 2>/dev/null)
seq_s=$( { for _ in $(seq "$REPS"); do target/release/nqueens "$N" --sequential 2>&1 >/dev/null | sed -E 's/.*sequential, ([0-9.]+) s/\1/'; done; } | median)

scenario ft      "$expect" --local-nodes 4
scenario noft    "$expect" --local-nodes 4 --ft none
scenario three   "$expect" --local-nodes 3
scenario kill    "$expect" --local-nodes 4 --chaos 'kill:node=2,at=50%'
scenario master  "$expect" --local-nodes 4 --chaos 'kill:node=0,at=50%'
scenario master2 "$expect" --local-nodes 4 --chaos 'kill:node=0,at=20%'
scenario master8 "$expect" --local-nodes 4 --chaos 'kill:node=0,at=80%'
SATIN_DEATH_NOTICES=off scenario mastert "$expect" --local-nodes 4 --chaos 'kill:node=0,at=50%'
scenario naive   "$expect" --local-nodes 4 --ft naive --chaos 'kill:node=2,at=50%'
# Checkpoints every second: paired with the run without them.
paired plain ckpt "$expect" --local-nodes 4
interrupted lost    "$expect" 'kill:node=all,at=50%' --local-nodes 4
interrupted suspend "$expect" 'suspend:at=50%' --local-nodes 4
# Stragglers: one node slowed 5 x or hung at 20 %, with and without
# duplicates; the mechanism's fault-free cost (paired: on, then off —
# no copies and timeouts too far out to matter).
OFF=(--no-duplicates --soft-timeout 1000 --hard-timeout 2000)
paired_args() {
    local on=$1 off=$2 expect=$3; shift 3
    local ot=() oc=() ft=() fc=()
    for _ in $(seq "$REPS"); do
        read -r t c < <(run "$expect" "$@"); ot+=("$t"); oc+=("$c")
        read -r t c < <(run "$expect" "$@" "${OFF[@]}"); ft+=("$t"); fc+=("$c")
    done
    T[$on]=$(printf '%s\n' "${ot[@]}" | median); C[$on]=$(printf '%s\n' "${oc[@]}" | median)
    T[$off]=$(printf '%s\n' "${ft[@]}" | median); C[$off]=$(printf '%s\n' "${fc[@]}" | median)
}
paired_args son soff "$expect" --local-nodes 4
scenario slow    "$expect" --local-nodes 4 --chaos 'slow:node=2,factor=5,at=20%'
scenario slowoff "$expect" --local-nodes 4 --chaos 'slow:node=2,factor=5,at=20%' --no-duplicates
scenario hung    "$expect" --local-nodes 4 --chaos 'hang:node=2,at=20%'

echo "nqueens $N, 4 processes x 1 worker on loopback, median of $REPS, $(nproc) cores; sequential $seq_s s"
echo
echo "| run | time (s) | cpu of all nodes (s) | ratio | extra cpu |"
echo "|---|---|---|---|---|"
echo "| fault tolerance on (table), no faults | ${T[ft]} | ${C[ft]} | 1.000 | |"
echo "| --ft none, no faults | ${T[noft]} | ${C[noft]} | on/off $(r "${T[ft]}" "${T[noft]}") | |"
echo "| 3 nodes from the start | ${T[three]} | ${C[three]} | | |"
echo "| kill 1 of 4 (a worker) at 50 % | ${T[kill]} | ${C[kill]} | vs 3 from start $(r "${T[kill]}" "${T[three]}") | $(pct "${C[kill]}" "${C[ft]}") |"
echo "| kill the master at 20 % | ${T[master2]} | ${C[master2]} | vs 3 from start $(r "${T[master2]}" "${T[three]}") | $(pct "${C[master2]}" "${C[ft]}") |"
echo "| kill the master at 50 % | ${T[master]} | ${C[master]} | vs 3 from start $(r "${T[master]}" "${T[three]}") | $(pct "${C[master]}" "${C[ft]}") |"
echo "| kill the master at 80 % | ${T[master8]} | ${C[master8]} | vs 3 from start $(r "${T[master8]}" "${T[three]}") | $(pct "${C[master8]}" "${C[ft]}") |"
echo "| kill the master at 50 %, found by the idle timeout (1 s) | ${T[mastert]} | ${C[mastert]} | vs 3 from start $(r "${T[mastert]}" "${T[three]}") | $(pct "${C[mastert]}" "${C[ft]}") |"
echo "| kill 1 of 4 at 50 %, --ft naive | ${T[naive]} | ${C[naive]} | vs 3 from start $(r "${T[naive]}" "${T[three]}") | $(pct "${C[naive]}" "${C[ft]}") |"
echo "| no faults, without checkpoints (paired) | ${T[plain]} | ${C[plain]} | 1.000 | |"
echo "| no faults, --checkpoint-interval 1s | ${T[ckpt]} | ${C[ckpt]} | $(r "${T[ckpt]}" "${T[plain]}") | $(pct "${C[ckpt]}" "${C[plain]}") |"
echo "| every node killed at 50 %, then resumed | ${T[lost]} | ${C[lost]} | vs uninterrupted $(r "${T[lost]}" "${T[plain]}") | $(pct "${C[lost]}" "${C[plain]}") |"
echo "| suspended at 50 %, then resumed | ${T[suspend]} | ${C[suspend]} | vs uninterrupted $(r "${T[suspend]}" "${T[plain]}") | $(pct "${C[suspend]}" "${C[plain]}") |"
echo "| no faults, straggler handling off (paired) | ${T[soff]} | ${C[soff]} | 1.000 | |"
echo "| no faults, straggler handling on | ${T[son]} | ${C[son]} | $(r "${T[son]}" "${T[soff]}") | $(pct "${C[son]}" "${C[soff]}") |"
echo "| node 2 slowed 5 x at 20 %, duplicates | ${T[slow]} | ${C[slow]} | vs no faults $(r "${T[slow]}" "${T[son]}") | $(pct "${C[slow]}" "${C[son]}") |"
echo "| node 2 slowed 5 x at 20 %, no duplicates | ${T[slowoff]} | ${C[slowoff]} | vs no faults $(r "${T[slowoff]}" "${T[son]}") | $(pct "${C[slowoff]}" "${C[son]}") |"
echo "| node 2 hung at 20 %, duplicates | ${T[hung]} | ${C[hung]} | vs no faults $(r "${T[hung]}" "${T[son]}") | $(pct "${C[hung]}" "${C[son]}") |"

# The raytracer: large results (image parts) travel and are checkpointed.
BIN=(target/release/raytracer --width "$RT" --height $((RT * 3 / 4)) --samples "$SAMPLES")
expect=$("${BIN[@]}" --workers 2 2>/dev/null)
scenario rt      "$expect" --local-nodes 4
paired rtplain rtckpt "$expect" --local-nodes 4
scenario rtmaster "$expect" --local-nodes 4 --chaos 'kill:node=0,at=50%'
interrupted rtlost    "$expect" 'kill:node=all,at=50%' --local-nodes 4
interrupted rtsuspend "$expect" 'suspend:at=50%' --local-nodes 4
echo
echo "raytracer ${RT}x$((RT * 3 / 4)), ${SAMPLES}x$SAMPLES rays per pixel, 4 processes x 1 worker, median of $REPS"
echo
echo "| run | time (s) | cpu of all nodes (s) | ratio | extra cpu |"
echo "|---|---|---|---|---|"
echo "| no faults, without checkpoints (paired) | ${T[rtplain]} | ${C[rtplain]} | 1.000 | |"
echo "| no faults, --checkpoint-interval 1s | ${T[rtckpt]} | ${C[rtckpt]} | $(r "${T[rtckpt]}" "${T[rtplain]}") | $(pct "${C[rtckpt]}" "${C[rtplain]}") |"
echo "| kill the master at 50 % | ${T[rtmaster]} | ${C[rtmaster]} | $(r "${T[rtmaster]}" "${T[rt]}") | $(pct "${C[rtmaster]}" "${C[rt]}") |"
echo "| every node killed at 50 %, then resumed | ${T[rtlost]} | ${C[rtlost]} | vs uninterrupted $(r "${T[rtlost]}" "${T[rtplain]}") | $(pct "${C[rtlost]}" "${C[rtplain]}") |"
echo "| suspended at 50 %, then resumed | ${T[rtsuspend]} | ${C[rtsuspend]} | vs uninterrupted $(r "${T[rtsuspend]}" "${T[rtplain]}") | $(pct "${C[rtsuspend]}" "${C[rtplain]}") |"
