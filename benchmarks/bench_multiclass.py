"""Multiclass fit time: boostkit's adaboost-mh, discrete-adaboost-mh and samme against LightGBM
and scikit-learn, in one run; and the pair-histogram kernel against the binary one.

Synthetic data: ``make_classification`` with 10 classes (10 informative and 2 redundant of 20
features, one cluster per class), n training rows and n/4 held out. Everything is timed in this
process, interleaved, after warming numba's JIT, with the thread counts pinned (``--jobs``:
boostkit's ``n_jobs``, which also sets numba's threads for the fit, and LightGBM's ``n_jobs``;
BLAS and OpenMP default to one thread); tables show medians over ``--repeats`` and ratios to the
peers measured in the same run, since the machines are shared and an absolute time alone says
little.

* kernels: at the same n x d, the binned codes of the data, random weights, for C = 3 and 10
  (``--kernel-classes``): one binary ``class_histogram`` (for scale), ``split_pair_weights``,
  ``pair_histogram`` and its parallel form with ``n_chunks`` = threads, ``threshold_pair_sums``:
  the per-round histogram work of a multiclass stump. Medians of ``--kernel-repeats`` calls.
* per-round time: boostkit and LightGBM are fitted with T and with T/10 rounds, and the
  difference of the fit times is divided by the difference of the rounds actually fitted (a
  stopping rule may end a fit early). What both fits share, input checks, binning (boostkit's
  quantile bins, LightGBM's Dataset) and setting up the model, cancels out; everything a round
  does stays in: histogram, split search, coefficients, margins and weights. The whole fit time
  at T rounds is shown too. A LightGBM round fits C one-split trees (one per class) and a
  boostkit round one stump with C-vector outputs (adaboost-mh, discrete-adaboost-mh) or a
  K-ary stump (samme): "per round" is each library's own round, and the accuracy columns show
  what a round buys.
* scikit-learn (``AdaBoostClassifier`` of depth-1 trees, i.e. SAMME) has no separate setup and
  takes ~0.3 s per round here: it is timed once on ``--sklearn-rounds`` rounds, fit time /
  rounds; its accuracy is compared with every other model's after the same number of rounds
  (boostkit's staged predictions, LightGBM's first rounds).
* LightGBM: ``objective="multiclass"``, ``num_leaves=2`` (stumps), ``max_bin=255``,
  ``learning_rate`` ``--lgbm-learning-rate`` (0.5: the most accurate of 0.1, 0.3, 0.5, 1.0 at
  100 rounds on this data, 1.0 within 0.3 points), deterministic, column-wise histograms.

Run:  python benchmarks/bench_multiclass.py            (100 000 x 20, 10 classes, ~1.5 minutes)
      python benchmarks/bench_multiclass.py --size 20000x20 --rounds 20 --repeats 1 \\
          --sklearn-rounds 2 --kernel-classes 3         (smoke)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402

import boostkit  # noqa: E402
from boostkit.data import bin_features  # noqa: E402
from boostkit.kernels.histogram import (  # noqa: E402
    class_histogram,
    pair_histogram,
    pair_histogram_parallel,
    split_pair_weights,
    threshold_pair_sums,
)
from timing import median_time  # noqa: E402

RECIPES = ("adaboost-mh", "discrete-adaboost-mh", "samme")
BASE = "adaboost-mh"


def parse_size(text: str) -> tuple[int, int]:
    n, d = text.lower().split("x")
    return int(float(n)), int(d)


def make_data(n: int, d: int, n_classes: int, seed: int = 0):
    from sklearn.datasets import make_classification

    informative = min(d, 10)
    X, y = make_classification(
        n_samples=n + n // 4, n_features=d, n_informative=informative,
        n_redundant=min(2, d - informative), n_classes=n_classes, n_clusters_per_class=1,
        random_state=seed,
    )
    return X[:n], y[:n], X[n:], y[n:]


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def accuracy(pred, y) -> float:
    return float(np.mean(pred == y))


# -- kernels ------------------------------------------------------------------------------------


def bench_kernels(X, classes_list, jobs_list, repeats):
    """Rows (C, kernel, ms) of the per-round histogram kernels on the binned ``X``."""
    codes = bin_features(X).codes
    d, n = codes.shape
    n_bins = 255
    rng = np.random.default_rng(0)
    binary_out = np.empty((d, n_bins, 2))
    w1 = rng.exponential(size=n)
    pos1 = (rng.random(n) < 0.5).astype(np.uint8)
    rows = []
    for c in classes_list:
        weights = rng.exponential(size=(n, c))
        is_pos = np.zeros((n, c), dtype=np.uint8)
        is_pos[np.arange(n), rng.integers(0, c, n)] = 1
        signed = np.empty((n, c, 2))
        hist = np.empty((d, n_bins, c, 2))
        wneg = np.empty((d, n_bins - 1, 2, c))
        wpos = np.empty_like(wneg)
        calls = [
            ("class_histogram (binary)", 1,
             lambda: class_histogram(codes, w1, pos1, binary_out)),
            ("split_pair_weights", 1, lambda: split_pair_weights(weights, is_pos, signed)),
            ("pair_histogram", 1, lambda: pair_histogram(codes, signed, hist)),
        ]
        calls += [(f"pair_histogram_parallel ({n_jobs} thr)", n_jobs,
                   lambda n_jobs=n_jobs: pair_histogram_parallel(codes, signed, hist, n_jobs))
                  for n_jobs in jobs_list if n_jobs > 1]
        calls.append(("threshold_pair_sums", 1, lambda: threshold_pair_sums(hist, wneg, wpos)))
        for name, n_threads, fn in calls:
            numba.set_num_threads(min(n_threads, numba.config.NUMBA_NUM_THREADS))
            fn()  # JIT (or the on-disk cache) and first touch of the outputs
            rows.append((c, name, 1e3 * median_time(fn, repeats)))
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return rows


# -- fits ---------------------------------------------------------------------------------------


def fit_boostkit(name, X, y, rounds, n_jobs):
    return boostkit.Booster(name, n_rounds=rounds, n_jobs=n_jobs).fit(X, y)


def fit_lightgbm(X, y, rounds, n_jobs, learning_rate):
    import lightgbm as lgb

    return lgb.LGBMClassifier(
        objective="multiclass", num_leaves=2, n_estimators=rounds, learning_rate=learning_rate,
        max_bin=255, n_jobs=n_jobs, verbose=-1, deterministic=True, force_col_wise=True,
    ).fit(X, y)


def fit_sklearn(X, y, rounds):
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier

    return AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=rounds,
                              random_state=0).fit(X, y)


def staged_accuracy(model, Xt, yt, rounds):
    """Test accuracy of a boostkit model after ``rounds`` rounds (its last if it has fewer)."""
    acc = float("nan")
    for t, pred in enumerate(model.staged_predict(Xt), start=1):
        acc = accuracy(pred, yt)
        if t == rounds:
            break
    return acc


def bench_fits(X, y, Xt, yt, rounds, sk_rounds, repeats, jobs_list, learning_rate):
    few = max(1, rounds // 10)
    per_round: dict[str, list[float]] = {}
    full: dict[str, list[float]] = {}
    acc_t: dict[str, float] = {}
    acc_sk: dict[str, float] = {}
    fitted: dict[str, int] = {}
    for _ in range(repeats):
        for n_jobs in jobs_list:
            candidates = [(name, lambda r, name=name: fit_boostkit(name, X, y, r, n_jobs))
                          for name in RECIPES]
            candidates.append(
                ("LightGBM", lambda r: fit_lightgbm(X, y, r, n_jobs, learning_rate)))
            for lib, fit in candidates:
                key = f"{lib} ({n_jobs} thr)"
                t_full, model = timed(lambda: fit(rounds))
                t_few, model_few = timed(lambda: fit(few))
                if lib == "LightGBM":
                    done, done_few = model.n_iter_, model_few.n_iter_
                else:
                    done, done_few = model.n_rounds, model_few.n_rounds
                per_round.setdefault(key, []).append((t_full - t_few) / max(done - done_few, 1))
                full.setdefault(key, []).append(t_full)
                fitted[key] = done
                if key in acc_t:
                    continue
                if lib == "LightGBM":
                    acc_t[key] = accuracy(model.predict(Xt), yt)
                    acc_sk[key] = accuracy(model.predict(Xt, num_iteration=sk_rounds), yt)
                else:
                    acc_t[key] = accuracy(model.predict(Xt), yt)
                    acc_sk[key] = staged_accuracy(model, Xt, yt, sk_rounds)
    if sk_rounds > 0:
        key = "scikit-learn (1 thr)"
        t_sk, model = timed(lambda: fit_sklearn(X, y, sk_rounds))
        per_round[key] = [t_sk / len(model.estimators_)]
        full[key] = [t_sk]
        fitted[key] = len(model.estimators_)
        acc_sk[key] = accuracy(model.predict(Xt), yt)
    return {key: (statistics.median(per_round[key]), statistics.median(full[key]), fitted[key],
                  acc_t.get(key, float("nan")), acc_sk.get(key, float("nan")))
            for key in per_round}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="100000x20", help="training rows x features")
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--sklearn-rounds", type=int, default=5, help="0 skips scikit-learn")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--jobs", default="1,2", help="thread counts for boostkit (capped at "
                        "numba's threads) and LightGBM")
    parser.add_argument("--lgbm-learning-rate", type=float, default=0.5)
    parser.add_argument("--kernel-classes", default="3,10",
                        help="C values of the kernel table ('' skips it)")
    parser.add_argument("--kernel-repeats", type=int, default=15)
    args = parser.parse_args(argv)
    jobs_list = [int(j) for j in args.jobs.split(",")]
    kernel_classes = [int(c) for c in args.kernel_classes.split(",") if c.strip()]
    n, d = parse_size(args.size)
    X, y, Xt, yt = make_data(n, d, args.classes)

    # Warm numba's JIT (and the on-disk cache), serial and parallel kernels, before any timing.
    Xw, yw, _, _ = make_data(2000, d, args.classes)
    for n_jobs in jobs_list:
        for name in RECIPES:
            fit_boostkit(name, Xw, yw, 3, n_jobs)

    print(f"{n} x {d}, {args.classes} classes ({Xt.shape[0]} held out); numba threads "
          f"available={numba.config.NUMBA_NUM_THREADS}, threading layer={numba.threading_layer()}")
    if kernel_classes:
        print(f"\nkernels (median of {args.kernel_repeats} calls, ms; binned codes of the data, "
              f"255 bins)")
        print(f"{'C':>3} {'kernel':>34} {'ms':>8} {'x binary':>9}")
        rows = bench_kernels(X, kernel_classes, jobs_list, args.kernel_repeats)
        binary = {c: ms for c, name, ms in rows if name.startswith("class_histogram")}
        for c, name, ms in rows:
            print(f"{c:>3} {name:>34} {ms:8.2f} {ms / binary[c]:9.2f}")

    results = bench_fits(X, y, Xt, yt, args.rounds, args.sklearn_rounds, args.repeats, jobs_list,
                         args.lgbm_learning_rate)
    sk = results.get("scikit-learn (1 thr)")
    few = max(1, args.rounds // 10)
    print(f"\nfits: {args.rounds} rounds (per round from {args.rounds} - {few} rounds), "
          f"scikit-learn {args.sklearn_rounds} rounds; medians of {args.repeats}")
    print(f"{'library':>30} {'ms/round':>9} {'fit s':>7} {'rounds':>6} {'x LightGBM':>10} "
          f"{'x sklearn':>9} {'acc@T':>7} {'acc@' + str(args.sklearn_rounds):>7}")
    for key, (per, fit_s, done, a_t, a_sk) in results.items():
        threads = key[key.index("("):]
        lgbm = results.get(f"LightGBM {threads}")
        vs_lgbm = f"{per / lgbm[0]:10.2f}" if lgbm else f"{'':>10}"
        vs_sk = f"{per / sk[0]:9.3f}" if sk else f"{'':>9}"
        print(f"{key:>30} {per * 1e3:9.2f} {fit_s:7.2f} {done:6d} {vs_lgbm} {vs_sk} "
              f"{a_t:7.4f} {a_sk:7.4f}")
    print("x LightGBM / x sklearn: time per round relative to LightGBM at the same threads and "
          "to scikit-learn (one thread); below 1 is faster.")
    for n_jobs in jobs_list:
        ours = results[f"{BASE} ({n_jobs} thr)"][0]
        line = f"{BASE} ({n_jobs} thr): {results[f'LightGBM ({n_jobs} thr)'][0] / ours:.2f}x " \
               "as fast as LightGBM per round"
        if sk:
            line += f", {sk[0] / ours:.1f}x as fast as scikit-learn"
        print(line)


if __name__ == "__main__":
    main()
