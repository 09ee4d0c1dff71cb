"""Binning a training set: ``boostkit.data.bin_features`` against LightGBM's Dataset construction,
and against coding every value by the plain binary search it replaced, in one run.

Peers, measured in the same process and interleaved with boostkit (``interleaved_medians``),
after warming numba's JIT, with thread counts pinned (numba's by ``numba.set_num_threads``,
LightGBM's by ``num_threads``):

* LightGBM: ``lgb.Dataset(X, label=y, params={"max_bin": 255, ...}).construct()``, which also
  samples rows for its bin edges (200 000 by default) and codes every value;
* search (1 thread): the same sampled thresholds, every value then coded by
  ``boostkit.kernels.binning.apply_bins`` (one binary search per value, feature by feature down
  the columns of the row-major X) and the bins counted by ``np.bincount``: the large-data path
  before the tiled, branch-free coding pass (``code_bins``).

Above 200 000 rows (``BIN_SAMPLE``) boostkit places the thresholds on a sample and codes every
row against them; at most 200 000 it sorts every column once (``quantile_bins``). Features are
standard normal float64 values (C-contiguous). Medians over ``--repeats``; the machine is shared,
so compare the ratios of one run rather than absolute times across runs.

Run:  python benchmarks/bench_binning.py                       (1 000 000 x 20, 200 000 x 20,
                                                               100 000 x 100; 1 and 2 threads)
      python benchmarks/bench_binning.py --sizes 300000x5 --repeats 3   (smoke)
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("NUMBA_NUM_THREADS", "2")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402
from bench_adaboost import parse_sizes  # noqa: E402
from timing import interleaved_medians  # noqa: E402

import boostkit.data  # noqa: E402
from boostkit.data import (BIN_SAMPLE, MAX_BINS, bin_features, bin_thresholds,  # noqa: E402
                           count_bins)
from boostkit.kernels.binning import apply_bins  # noqa: E402


def bin_by_search(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The codes and counts of bin_features' large-data path with a binary search per value: the
    sampled thresholds (the same rows as bin_features), apply_bins, np.bincount."""
    n, d = X.shape
    rows = np.sort(np.random.default_rng(0).choice(np.arange(n), BIN_SAMPLE, replace=False))
    thresholds = bin_thresholds(X[rows], MAX_BINS, np.zeros(d, dtype=np.int64),
                                np.zeros(d, dtype=bool))
    offsets = np.zeros(d + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([t.shape[0] for t in thresholds])
    codes = np.empty((d, n), dtype=np.uint8)
    apply_bins(X, np.concatenate(thresholds), offsets, MAX_BINS - 1, codes)
    return codes, count_bins(codes, None, MAX_BINS)


def lightgbm_dataset(X: np.ndarray, y: np.ndarray, n_threads: int) -> None:
    import lightgbm as lgb

    params = {"max_bin": MAX_BINS, "verbose": -1, "num_threads": n_threads}
    lgb.Dataset(X, label=y, params=params).construct()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000000x20,200000x20,100000x100")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    print(f"numba threads available: {numba.config.NUMBA_NUM_THREADS}; BIN_SAMPLE = "
          f"{boostkit.data.BIN_SAMPLE}")
    header = (f"{'n x d':>14} {'thr':>3} {'boostkit s':>10} {'ns/value':>8} {'lightgbm s':>10} "
              f"{'lgb/bk':>6} {'search s':>9} {'search/bk':>9}")
    print(header)
    for n, d in parse_sizes(args.sizes):
        rng = np.random.default_rng(0)
        X = rng.standard_normal((n, d))
        y = (rng.random(n) < 0.5).astype(np.float64)
        large = n > BIN_SAMPLE
        if large:  # the search path's answer is boostkit's, bit for bit
            codes, counts = bin_by_search(X)
            binned = bin_features(X)
            assert np.array_equal(codes, binned.codes) and np.array_equal(counts, binned.bin_counts)
        for n_threads in (1, 2):
            if n_threads > numba.config.NUMBA_NUM_THREADS:
                continue
            numba.set_num_threads(n_threads)
            fns = [lambda: bin_features(X), lambda: lightgbm_dataset(X, y, n_threads)]
            if large and n_threads == 1:
                fns.append(lambda: bin_by_search(X))
            for fn in fns:  # JIT and first-touch warm-up
                fn()
            times = interleaved_medians(fns, args.repeats)
            ours, lgb_time = times[0], times[1]
            search = (f"{times[2]:>9.3f} {times[2] / ours:>9.2f}" if len(times) > 2
                      else f"{'':>9} {'':>9}")
            print(f"{n:>8} x {d:<3} {n_threads:>3} {ours:>10.3f} {ours / (n * d) * 1e9:>8.1f} "
                  f"{lgb_time:>10.3f} {lgb_time / ours:>6.2f} {search}", flush=True)


if __name__ == "__main__":
    main()
