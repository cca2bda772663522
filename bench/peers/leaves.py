"""The sequential pieces of `peers.py`'s workloads, in a module every
worker process imports (numba compiles `_count` once per process)."""

import numpy as np
from numba import njit


@njit(cache=False)
def _count(full, cols, left, right):
    if cols == full:
        return 1
    total = 0
    free = ~(cols | left | right) & full
    while free:
        bit = free & -free
        free ^= bit
        total += _count(full, cols | bit, ((left | bit) << 1) & full, (right | bit) >> 1)
    return total


def nqueens_leaf(n, cols, left, right):
    """The solutions below a board, as `nqueens_plain` counts them."""
    return int(_count((1 << n) - 1, cols, left, right))


def nqueens_prefixes(n, rows):
    """The boards after the first `rows` rows: the tasks' inputs."""
    full = (1 << n) - 1
    boards = [(0, 0, 0)]
    for _ in range(rows):
        nxt = []
        for cols, left, right in boards:
            free = ~(cols | left | right) & full
            while free:
                bit = free & -free
                free ^= bit
                nxt.append((cols | bit, ((left | bit) << 1) & full, (right | bit) >> 1))
        boards = nxt
    return boards


def make_input(n, seed):
    return np.random.default_rng(seed).integers(0, 2**63, size=n, dtype=np.uint64)


def merge(a, b):
    # Two sorted runs: numpy's stable sort finds the two runs and merges them.
    out = np.concatenate((a, b))
    out.sort(kind="stable")
    return out


def checksum(sorted_values):
    # The position-weighted sum of `mergesort.rs`, modulo 2**64.
    weights = np.arange(1, len(sorted_values) + 1, dtype=np.uint64)
    return int(np.sum(sorted_values * weights, dtype=np.uint64))


def random_points(n, seed):
    return np.random.default_rng(seed).random((n, 2))


def count_chunk(tree, points, lo, hi, r):
    return int(tree.query_ball_point(points[lo:hi], r, return_length=True).sum())


def chunks(n, pieces):
    step = -(-n // pieces)
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]
