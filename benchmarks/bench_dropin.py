"""Fit time of the drop-in estimators (boostkit.sklearn.AdaBoostClassifier / AdaBoostRegressor)
against scikit-learn's AdaBoostClassifier / AdaBoostRegressor, in one run.

Cases (n x d, default 100 000 x 20, make_classification / make_regression):

* ``stumps``: ``AdaBoostClassifier()`` (SAMME with depth-1 trees; boostkit: native Gini stumps);
* ``depth-3``: ``AdaBoostClassifier(DecisionTreeClassifier(max_depth=3))`` (boostkit: the
  native ``tree`` learner);
* ``regressor``: ``AdaBoostRegressor()`` (AdaBoost.R2 with depth-3 regression trees; boostkit:
  native trees on the bootstrap counts);
* ``stumps-5``: ``AdaBoostClassifier()`` on five classes (boostkit: native SAMME over the
  (example, class) pairs, whose histograms cost about C times the binary ones).

Every fit runs in this process, after warming numba's JIT on a small fit, with scikit-learn's
threads (OMP_NUM_THREADS) and numba's pinned to ``--threads`` (default 1: scikit-learn's trees
are single-threaded). Times are medians over ``--repeats``; the two libraries' fits alternate
(boostkit, scikit-learn, boostkit, ...) so that both see the same load of a shared machine.
scikit-learn takes ~0.3-1 s per round at 100 000 x 20, so it is timed on ``--sklearn-rounds``
rounds and compared per round; boostkit is timed on ``--rounds`` (its per-round time includes
the one-off binning). The quality
columns are test accuracy / R^2 of both after ``--sklearn-rounds`` rounds (boostkit's staged
prediction), so they compare equal rounds.

Run:  python benchmarks/bench_dropin.py                           (~2 minutes)
      python benchmarks/bench_dropin.py --size 20000x20 --repeats 1  (smoke)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

_threads = "1"
for _i, _arg in enumerate(sys.argv):
    if _arg == "--threads" and _i + 1 < len(sys.argv):
        _threads = sys.argv[_i + 1]
    elif _arg.startswith("--threads="):
        _threads = _arg.split("=", 1)[1]
os.environ["OMP_NUM_THREADS"] = _threads  # before numpy / scikit-learn start their pools

import numba  # noqa: E402
import numpy as np  # noqa: E402
from sklearn import ensemble  # noqa: E402
from sklearn.datasets import make_classification, make_regression  # noqa: E402
from sklearn.metrics import r2_score  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import median_time  # noqa: E402

from boostkit.sklearn import AdaBoostClassifier, AdaBoostRegressor  # noqa: E402


def parse_size(text: str) -> tuple[int, int]:
    n, d = text.lower().split("x")
    return int(float(n)), int(d)


def classification(n, d, seed=0, n_classes=2):
    X, y = make_classification(n + n // 4, d, n_informative=max(2, d // 2), n_redundant=d // 4,
                               flip_y=0.05, n_classes=n_classes, random_state=seed)
    return X[:n], y[:n], X[n:], y[n:]


def five_classes(n, d, seed=0):
    return classification(n, d, seed, n_classes=5)


def regression(n, d, seed=0):
    X, y = make_regression(n + n // 4, d, n_informative=max(2, d // 2), noise=10.0,
                           random_state=seed)
    return X[:n], y[:n], X[n:], y[n:]


def cases(threads: int):
    tree3 = DecisionTreeClassifier(max_depth=3)
    return {
        "stumps": (classification,
                   lambda T: AdaBoostClassifier(n_estimators=T, n_jobs=threads),
                   lambda T: ensemble.AdaBoostClassifier(n_estimators=T, random_state=0)),
        "depth-3": (classification,
                    lambda T: AdaBoostClassifier(tree3, n_estimators=T, n_jobs=threads),
                    lambda T: ensemble.AdaBoostClassifier(tree3, n_estimators=T,
                                                          random_state=0)),
        "regressor": (regression,
                      lambda T: AdaBoostRegressor(n_estimators=T, random_state=0),
                      lambda T: ensemble.AdaBoostRegressor(n_estimators=T, random_state=0)),
        "stumps-5": (five_classes,
                     lambda T: AdaBoostClassifier(n_estimators=T, n_jobs=threads),
                     lambda T: ensemble.AdaBoostClassifier(n_estimators=T, random_state=0)),
    }


def staged_quality(model, X, y, rounds, regression_case):
    for t, prediction in enumerate(model.staged_predict(X), start=1):
        if t == rounds:
            break
    if regression_case:
        return r2_score(y, prediction)
    return float(np.mean(prediction == y))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="100000x20")
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--sklearn-rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cases", default="stumps,depth-3,regressor,stumps-5")
    args = parser.parse_args(argv)
    n, d = parse_size(args.size)
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    table = cases(args.threads)
    print(f"{n} x {d}; boostkit {args.rounds} rounds, scikit-learn {args.sklearn_rounds} rounds; "
          f"threads={args.threads} (numba threading layer {numba.threading_layer()})")
    header = (f"{'case':<10} {'boostkit s/round':>17} {'sklearn s/round':>16} {'speed-up':>9}  "
              f"{'boostkit fit':>12}  {'quality (boostkit / sklearn, equal rounds)':>40}")
    print(header)
    print("-" * len(header))
    for name in args.cases.split(","):
        make, ours, theirs = table[name]
        X, y, Xt, yt = make(n, d)
        small = make(2000, d, seed=1)
        ours(3).fit(small[0], small[1])  # warm numba's JIT (and its caches)
        models = {}

        def fit_ours():
            models["ours"] = ours(args.rounds).fit(X, y)

        def fit_theirs():
            models["theirs"] = theirs(args.sklearn_rounds).fit(X, y)

        times = {fit_ours: [], fit_theirs: []}
        for _ in range(args.repeats):
            for fit in times:
                times[fit].append(median_time(fit, 1))
        t_ours, t_theirs = (statistics.median(times[fit]) for fit in (fit_ours, fit_theirs))
        rounds_ours = len(models["ours"].estimators_)
        rounds_theirs = len(models["theirs"].estimators_)
        per_ours, per_theirs = t_ours / rounds_ours, t_theirs / rounds_theirs
        is_regression = name == "regressor"
        q_ours = staged_quality(models["ours"], Xt, yt, rounds_theirs, is_regression)
        q_theirs = staged_quality(models["theirs"], Xt, yt, rounds_theirs, is_regression)
        metric = "R^2" if is_regression else "accuracy"
        print(f"{name:<10} {per_ours:>17.4f} {per_theirs:>16.4f} {per_theirs / per_ours:>8.1f}x  "
              f"{t_ours:>11.2f}s  {metric:>10} {q_ours:.4f} / {q_theirs:.4f}")


if __name__ == "__main__":
    main()
