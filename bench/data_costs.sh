#!/usr/bin/env bash
# What data costs across processes: each data-carrying program in one
# process against `--local-nodes 3`, in turn (bench/pairs.sh), at sizes
# where one process takes about half a second or more; then the bytes
# each node sent (through shared memory of them), encoded, hashed and
# decoded in one 3-node run (`--stats-json`).
#
#   bench/data_costs.sh [PAIRS]        # default 5; SATIN_SAME_HOST=off for QUIC only
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5}
cargo build --release --quiet -p satin-examples --bin mergesort --bin kdtree --bin kernels --bin barnes_hut --bin raytracer
t=target/release
programs=(
    "$t/mergesort 5000000"
    "$t/kdtree 1000000 --radius 0.002"
    "$t/kdtree 1000000 --radius 0.002 --build"
    "$t/kernels strassen 2048"
    "$t/kernels fft 22"
    "$t/kernels quickhull 8000000"
    "$t/kernels prefix 40000000"
    "$t/kernels kdbuild 4000000"
    "$t/barnes_hut --bodies 100000 --steps 1"
    "$t/raytracer --width 2000 --height 1500 --samples 3"
)
stats=$(mktemp)
trap 'rm -f "$stats"' EXIT
for p in "${programs[@]}"; do
    # shellcheck disable=SC2086
    median=$(bench/pairs.sh "$pairs" $p | tail -1)
    # shellcheck disable=SC2086
    $p --local-nodes 3 --no-progress --stats-json "$stats" >/dev/null 2>&1
    bytes=$(python3 -c '
import json, sys
nodes = json.load(open(sys.argv[1]))["nodes"]
mb = lambda k: "/".join("%.0f" % (n.get(k, 0) / 1e6) for n in nodes)
print("sent %s (in memory %s) encoded %s hashed %s decoded %s MB" % tuple(mb(k) for k in ("bytes_sent", "bytes_sent_in_memory", "bytes_encoded", "bytes_hashed", "bytes_decoded")))
' "$stats")
    echo "${p#"$t/"}: $median; $bytes"
done
