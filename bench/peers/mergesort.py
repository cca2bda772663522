"""Merge sort of N seeded random 64-bit integers on a warm local cluster of
Ray or Dask worker processes, as `satin-examples`' `mergesort N` does it:
the input is made inside the run, halves are sorted as tasks down to
pieces of N / 2**DEPTH numbers (sorted by numpy), and sorted halves are
merged. Prints one line per round: `<engine> <seconds> <checksum>`.

    python mergesort.py ray 5000000 --rounds 5 --workers 3
"""

import argparse
import sys
import time

import numpy as np


def make_input(n, seed):
    return np.random.default_rng(seed).integers(0, 2**63, size=n, dtype=np.uint64)


def merge(a, b):
    # Two sorted runs: numpy's stable sort (timsort for integers finds the
    # two runs and merges them in one pass).
    out = np.concatenate((a, b))
    out.sort(kind="stable")
    return out


def checksum(sorted_values):
    # The position-weighted sum of `mergesort.rs`, modulo 2**64.
    weights = np.arange(1, len(sorted_values) + 1, dtype=np.uint64)
    return int(np.sum(sorted_values * weights, dtype=np.uint64))


def run_ray(args):
    import ray

    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")

    @ray.remote
    def sort_piece(data, depth):
        if depth == 0:
            return np.sort(data)
        mid = len(data) // 2
        left = sort_piece.remote(data[:mid], depth - 1)
        right = sort_piece.remote(data[mid:], depth - 1)
        return merge(*ray.get([left, right]))

    @ray.remote
    def make_and_sort(n, seed, depth):
        return ray.get(sort_piece.remote(make_input(n, seed), depth))

    def one():
        return ray.get(make_and_sort.remote(args.n, args.seed, args.depth))

    return one


def run_dask(args):
    import dask
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1")
    client = Client(cluster)

    def graph():
        data = dask.delayed(make_input)(args.n, args.seed)

        def sort_range(lo, hi, depth):
            if depth == 0:
                return dask.delayed(np.sort)(data[lo:hi])
            mid = (lo + hi) // 2
            return dask.delayed(merge)(sort_range(lo, mid, depth - 1), sort_range(mid, hi, depth - 1))

        return sort_range(0, args.n, args.depth)

    def one():
        return client.compute(graph()).result()

    return one


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("engine", choices=["ray", "dask"])
    p.add_argument("n", type=int)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--workers", type=int, default=3)
    p.add_argument("--depth", type=int, default=4, help="levels of tasks: 2**depth pieces")
    args = p.parse_args()
    one = {"ray": run_ray, "dask": run_dask}[args.engine](args)
    one()  # warm: workers started, functions shipped
    for _ in range(args.rounds):
        start = time.perf_counter()
        out = one()
        took = time.perf_counter() - start
        assert len(out) == args.n and bool(np.all(out[:-1] <= out[1:])), "not sorted"
        print(f"{args.engine} {took:.3f} {checksum(out)}", flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
