"""The workloads of `bench/peers/run.sh` on Ray or Dask, written as their
users write them, on a local cluster of WORKERS worker processes of one
CPU each (Ray: `ray.init(num_cpus=WORKERS)`; Dask: a scheduler process and
WORKERS worker processes of one thread, started from their command lines
so that the scheduler can be killed on its own).

    python peers.py ENGINE WORKLOAD [--rounds R] [--workers W] [--kill worker|head]

Workloads (each the same computation as the example of ours named after
it; the answers agree where the inputs can: N-queens and fib):

  nqueens N   tasks for the first rows' placements, numba leaves
  sort N      merge sort of N seeded random u64: halves as tasks down to
              16 pieces sorted by numpy, sorted halves merged by numpy
  kdtree N    pairs of N random points within --radius: the tree built
              once per round (scipy's cKDTree), put in the object store
              (`ray.put` / `scatter`) and queried by chunks of the points
  fib N       one task per call: the per-task overhead

Prints `cold <s>` (from this process's start to the first answer:
interpreter, imports, cluster start, first run), then one line per warm
round `warm <s> <answer>`. With `--kill`, after the warm rounds one more
run has a worker process (or the head: Ray's GCS server, Dask's
scheduler) killed with SIGKILL half-way through (half the warm median);
it prints `killed-<what> <s> <answer>` or `killed-<what> - <why no
answer>`.
"""

import time

STARTED = time.perf_counter()

import argparse  # noqa: E402
import operator  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402

import numpy as np  # noqa: E402

# The leaves live in a module of their own, importable by every worker
# process (PYTHONPATH below), so they are sent by name and numba compiles
# each once per process.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [sys.path[0], os.environ.get("PYTHONPATH")]))
from leaves import chunks, checksum, count_chunk, make_input, merge, nqueens_leaf, nqueens_prefixes, random_points  # noqa: E402

ANSWER_WAIT = 120  # seconds a killed run may take before it counts as lost


# ---------------------------------------------------------------- Ray

RAY_TASKS = {"ray::nq", "ray::sort_piece", "ray::make_and_sort", "ray::count", "ray::fib"}


class Ray:
    def __init__(self, workers):
        import ray

        self.ray = ray
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")

        @ray.remote
        def nq(n, cols, left, right):
            return nqueens_leaf(n, cols, left, right)

        @ray.remote
        def sort_piece(data, depth):
            if depth == 0:
                return np.sort(data)
            mid = len(data) // 2
            halves = [sort_piece.remote(data[:mid], depth - 1), sort_piece.remote(data[mid:], depth - 1)]
            return merge(*ray.get(halves))

        @ray.remote
        def make_and_sort(n, seed, depth):
            return ray.get(sort_piece.remote(make_input(n, seed), depth))

        @ray.remote
        def count(tree, points, lo, hi, r):
            return count_chunk(tree, points, lo, hi, r)

        @ray.remote
        def fib(n):
            if n < 2:
                return n
            return sum(ray.get([fib.remote(n - 1), fib.remote(n - 2)]))

        self.tasks = dict(nq=nq, make_and_sort=make_and_sort, count=count, fib=fib)

    def run(self, args):
        ray, t = self.ray, self.tasks
        if args.workload == "nqueens":
            return sum(ray.get([t["nq"].remote(args.n, *b) for b in nqueens_prefixes(args.n, args.rows)]))
        if args.workload == "sort":
            return checksum(ray.get(t["make_and_sort"].remote(args.n, args.seed, 4)))
        if args.workload == "kdtree":
            from scipy.spatial import cKDTree

            points = random_points(args.n, args.seed)
            tree, pts = ray.put(cKDTree(points)), ray.put(points)
            parts = [t["count"].remote(tree, pts, lo, hi, args.radius) for lo, hi in chunks(args.n, 8 * args.workers)]
            return sum(ray.get(parts)) - args.n
        return ray.get(t["fib"].remote(args.n))

    def victim(self, what):
        import psutil

        for p in psutil.process_iter(["pid", "cmdline"]):
            cmd = " ".join(p.info["cmdline"] or [])
            if what == "head" and "gcs_server" in cmd:
                return p.info["pid"]
            # A worker process names itself after the task it runs.
            if what == "worker" and cmd.split(" ")[0] in RAY_TASKS:
                return p.info["pid"]
        return None

    def close(self):
        import psutil

        # What the shutdown leaves (a cluster whose raylet was killed
        # cannot stop its agents) is ended here.
        ours = psutil.Process().children(recursive=True)
        self.ray.shutdown()
        for p in ours:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass


# ---------------------------------------------------------------- Dask


class Dask:
    def __init__(self, workers):
        from dask.distributed import Client

        self.dir = tempfile.mkdtemp(prefix="peers-dask-")
        file = os.path.join(self.dir, "scheduler.json")
        dask_cli = os.path.join(os.path.dirname(sys.executable), "dask")
        quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.scheduler = subprocess.Popen(
            [dask_cli, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", file],
            **quiet,
        )
        self.workers = subprocess.Popen(
            [dask_cli, "worker", "--scheduler-file", file, "--nworkers", str(workers), "--nthreads", "1",
             "--no-dashboard", "--host", "127.0.0.1", "--local-directory", self.dir],
            **quiet,
        )
        while not os.path.exists(file):
            time.sleep(0.01)
        self.client = Client(scheduler_file=file)
        self.client.wait_for_workers(workers)

    def run(self, args):
        import dask

        c = self.client
        if args.workload == "nqueens":
            futures = c.map(lambda b: nqueens_leaf(args.n, *b), nqueens_prefixes(args.n, args.rows), pure=False)
            return sum(c.gather(futures))
        if args.workload == "sort":
            data = dask.delayed(make_input)(args.n, args.seed)

            def sort_range(lo, hi, depth):
                if depth == 0:
                    return dask.delayed(np.sort)(data[lo:hi])
                mid = (lo + hi) // 2
                return dask.delayed(merge)(sort_range(lo, mid, depth - 1), sort_range(mid, hi, depth - 1))

            return checksum(c.compute(sort_range(0, args.n, 4)).result())
        if args.workload == "kdtree":
            from scipy.spatial import cKDTree

            points = random_points(args.n, args.seed)
            tree = c.scatter(cKDTree(points), broadcast=True)
            pts = c.scatter(points, broadcast=True)
            parts = [c.submit(count_chunk, tree, pts, lo, hi, args.radius, pure=False)
                     for lo, hi in chunks(args.n, 8 * len(c.scheduler_info()["workers"]))]
            return sum(c.gather(parts)) - args.n

        def fib(n):
            if n < 2:
                return n
            return dask.delayed(operator.add)(fib(n - 1), fib(n - 2))

        return c.compute(fib(args.n)).result()

    def victim(self, what):
        if what == "head":
            return self.scheduler.pid
        pids = self.client.run(os.getpid)
        return next(iter(pids.values()), None)

    def close(self):
        try:
            self.client.close(timeout=5)
        except Exception:
            pass
        for p in (self.workers, self.scheduler):
            p.send_signal(signal.SIGTERM)
        for p in (self.workers, self.scheduler):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------- main


def killed_run(engine, args, after):
    """One run with `args.kill` SIGKILLed `after` seconds in."""
    out = {}

    def run():
        try:
            out["answer"] = engine.run(args)
        except Exception as e:  # what the engine says when it cannot answer
            out["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:120]

    start = time.perf_counter()
    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    runner.join(after)
    victim = engine.victim(args.kill)
    if victim is None:
        return "- nothing to kill found"
    os.kill(victim, signal.SIGKILL)
    runner.join(ANSWER_WAIT)
    took = time.perf_counter() - start
    if "answer" in out:
        return f"{took:.3f} {out['answer']}"
    return f"- {out.get('error', f'no answer in {ANSWER_WAIT} s')}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("engine", choices=["ray", "dask"])
    p.add_argument("workload", choices=["nqueens", "sort", "kdtree", "fib"])
    p.add_argument("n", type=int)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--workers", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--radius", type=float, default=0.002)
    p.add_argument("--rows", type=int, default=3, help="N-queens: rows placed by tasks before the leaves")
    p.add_argument("--kill", choices=["worker", "head"])
    args = p.parse_args()
    engine = {"ray": Ray, "dask": Dask}[args.engine](args.workers)
    try:
        answer = engine.run(args)
        print(f"cold {time.perf_counter() - STARTED:.3f} {answer}", flush=True)
        warm = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            answer = engine.run(args)
            warm.append(time.perf_counter() - start)
            print(f"warm {warm[-1]:.3f} {answer}", flush=True)
        if args.kill:
            after = sorted(warm)[len(warm) // 2] / 2 if warm else 1.0
            print(f"killed-{args.kill} {killed_run(engine, args, after)}", flush=True)
    finally:
        if not (args.kill == "head"):
            engine.close()
        else:
            # A cluster without its head cannot be asked to stop: end it.
            try:
                engine.close()
            except Exception:
                pass
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
