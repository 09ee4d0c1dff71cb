"""Where a batched ``logitboost`` round goes: its parts timed one by one, and whole rounds.

Parts (each called ``--calls`` times in one compiled loop, on the state a 100-round fit leaves:
its margins F and weights D): the weights from the margins (``logit-weights``' compiled form and
the batch's division by their sum), w |z| (``response_weights``), the two-channel histogram of
w and w |z| (``two_channel_histogram``), the engine's one-channel class histogram of w for
comparison (``class_histogram``), and the least-squares search (``least_squares_search``).
Rounds: the batch kernel's time per round (its calls timed in a 200-round fit), and the whole
per-round time of ``logitboost`` and ``adaboost`` ((fit(T) - fit(T/10)) / 0.9 T).

Process CPU time, medians (parts: of three interleaved rounds of ``--repeats`` loops each;
rounds: of ``--repeats`` fits); one thread (set NUMBA_NUM_THREADS=1). To compare two trees,
run it under each in turn (PYTHONPATH=<tree>:<tree>/plugins, a numba cache directory each).
Run:

    python benchmarks/bench_logitboost.py --sizes 1000x10,100000x100,1000000x20 --rounds 50
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402

import boostkit  # noqa: E402
import boostkit.kernels.rounds as rounds  # noqa: E402
from boostkit.kernels.histogram import class_histogram  # noqa: E402
from boostkit.kernels.two_channel import two_channel_histogram  # noqa: E402
from boostkit.losses import compiled_weights, get_loss  # noqa: E402
from boostkit.splits import TIE_TOLERANCE  # noqa: E402
from boostkit_additive.kernels import (least_squares_search, response_histogram,  # noqa: E402
                                       response_weights)

_search = numba.njit(least_squares_search)
_response_histogram = numba.njit(response_histogram)
_margin_weights = compiled_weights(get_loss("logitboost"))


@numba.njit
def _loop_weights(calls, margin, y, d1, weights, scratch, params, sums):
    for _ in range(calls):
        _margin_weights(margin, y, d1, weights, scratch, params, sums)
        total = sums[0]
        for i in range(weights.shape[0]):
            weights[i] /= total


@numba.njit
def _loop_response(calls, margin, y, weights, z_max, scratch):
    for _ in range(calls):
        response_weights(margin, y, weights, z_max, scratch)


@numba.njit
def _loop_two_channel(calls, codes, weights, values, is_pos, out):
    for _ in range(calls):
        two_channel_histogram(codes, weights, values, is_pos, out)


@numba.njit
def _loop_response_histogram(calls, codes, is_pos, margin, y, weights, params, scratch, out):
    for _ in range(calls):
        _response_histogram(codes, is_pos, margin, y, weights, params, scratch, out)


@numba.njit
def _loop_class(calls, codes, weights, is_pos, out):
    for _ in range(calls):
        class_histogram(codes, weights, is_pos, out)


@numba.njit
def _loop_search(calls, hist, valid, scores, sides, cell_scores, params):
    k = 0
    for _ in range(calls):
        k = _search(hist, valid, scores, sides, cell_scores, params)
    return k


def make_data(n: int, d: int):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n + n // 4, n_features=d, n_informative=max(2, d // 2),
                               n_redundant=d // 4, flip_y=0.05, random_state=0)
    return X[:n], y[:n]


class KernelClock:
    """Wraps the batch kernel: the CPU time of its calls, and the arrays of the last call."""

    def __init__(self):
        self.seconds = 0.0
        self.arguments = None
        self._kernel = rounds.batch_kernel

    def __enter__(self):
        kernel = self._kernel()

        def timed(*args):
            start = time.process_time()
            ran = kernel(*args)
            self.seconds += time.process_time() - start
            self.arguments = args
            return ran

        rounds.batch_kernel = lambda: timed
        return self

    def __exit__(self, *exc):
        rounds.batch_kernel = self._kernel


def fit(X, y, recipe, n_rounds):
    start = time.process_time()
    model = boostkit.Booster(recipe, n_rounds=n_rounds).fit(X, y)
    return time.process_time() - start, model


def per_call(loop, calls, repeats, *args):
    times = []
    for _ in range(repeats):
        start = time.process_time()
        loop(calls, *args)
        times.append((time.process_time() - start) / calls)
    return statistics.median(times)


def bench(n, d, rounds_, repeats, calls):
    X, y = make_data(n, d)
    with KernelClock() as clock:
        fit(X, y, "logitboost", 100)
    (codes, is_pos, labels, d1, weights, margin, valid, bin_counts, *_rest) = clock.arguments
    weights, margin = weights.copy(), margin.copy()
    params = np.array([4.0, TIE_TOLERANCE])
    scratch = np.empty(n)
    sums = np.empty(2)
    n_bins = bin_counts.shape[1]
    hist4 = np.empty((d, n_bins, 4))
    hist2 = np.empty((d, n_bins, 2))
    scores = np.empty((d, n_bins - 1))
    sides = np.empty((2, 2))
    cell_scores = np.empty(2)
    w = weights.copy()
    response_weights(margin, labels, w, 4.0, scratch)
    parts = {
        "weights": lambda: per_call(_loop_weights, calls, repeats, margin, labels, d1,
                                    w.copy(), np.empty(n), params, sums),
        "w|z|": lambda: per_call(_loop_response, calls, repeats, margin, labels, weights, 4.0,
                                 scratch),
        "two-channel": lambda: per_call(_loop_two_channel, calls, repeats, codes, weights,
                                        scratch, is_pos, hist4.reshape(d, n_bins, 2, 2)),
        "histogram": lambda: per_call(_loop_response_histogram, calls, repeats, codes, is_pos,
                                      margin, labels, weights, params, scratch, hist4),
        "class hist": lambda: per_call(_loop_class, calls, repeats, codes, weights, is_pos,
                                       hist2),
        "search": lambda: per_call(_loop_search, calls, repeats, hist4, valid, scores, sides,
                                   cell_scores, params),
    }
    # Compile every loop (and fill the histogram the search reads).
    _response_histogram(codes, is_pos, margin, labels, weights, params, scratch, hist4)
    per_call(_loop_weights, 1, 1, margin, labels, d1, w.copy(), np.empty(n), params, sums)
    per_call(_loop_response, 1, 1, margin, labels, weights, 4.0, scratch)
    per_call(_loop_two_channel, 1, 1, codes, weights, scratch, is_pos,
             hist4.reshape(d, n_bins, 2, 2))
    per_call(_loop_class, 1, 1, codes, weights, is_pos, hist2)
    per_call(_loop_response_histogram, 1, 1, codes, is_pos, margin, labels, weights, params,
             scratch, hist4)
    per_call(_loop_search, 1, 1, hist4, valid, scores, sides, cell_scores, params)
    timings = {name: [] for name in parts}
    for _ in range(3):  # interleaved rounds of every part
        for name, part in parts.items():
            timings[name].append(part())
    results = {name: statistics.median(ts) for name, ts in timings.items()}
    kernel, lb, ada = [], [], []
    for _ in range(repeats):
        with KernelClock() as clock:
            long_lb, _ = fit(X, y, "logitboost", rounds_)
        kernel.append(clock.seconds / rounds_)
        short_lb, _ = fit(X, y, "logitboost", rounds_ // 10)
        lb.append((long_lb - short_lb) / (0.9 * rounds_))
        long_ada, _ = fit(X, y, "adaboost", rounds_)
        short_ada, _ = fit(X, y, "adaboost", rounds_ // 10)
        ada.append((long_ada - short_ada) / (0.9 * rounds_))
    results["kernel round"] = statistics.median(kernel)
    results["logitboost round"] = statistics.median(lb)
    results["adaboost round"] = statistics.median(ada)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000x10")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--calls", type=int, default=0,
                        help="calls per timed loop (default: about 2e7 codes' worth)")
    args = parser.parse_args(argv)
    for item in args.sizes.split(","):
        n, d = (int(float(v)) for v in item.lower().split("x"))
        calls = args.calls or max(3, 20_000_000 // (n * d))
        results = bench(n, d, args.rounds, args.repeats, calls)
        per_code = 1e9 / (n * d)
        print(f"{n} x {d} ({calls} calls a part, {args.rounds} rounds)")
        for name, seconds in results.items():
            print(f"  {name:17s} {seconds * 1e6:10.2f} us   {seconds * per_code:6.3f} ns/code")
        print(f"  logitboost / adaboost round: "
              f"{results['logitboost round'] / results['adaboost round']:.2f}x")


if __name__ == "__main__":
    main()
