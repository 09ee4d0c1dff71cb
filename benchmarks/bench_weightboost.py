"""What WeightBoost's input-dependent regularizer costs: fit and predict time against AdaBoost.

The two recipes differ only in the regularizer (001 eq. 4: one factor e^{-|beta F_{t-1}(x)|} per
example and round, at fit and at predict time) and in the reweighting (eq. 7: weights
e^{-yF - |beta F|}, and e^{-yF} for the exponential cost, the potential: two exponentials per
example where AdaBoost's reweighting has one). Each pair is timed with the same weak learner: the
``stump`` learner, where the extra per-example work weighs most, and the ``weightboost``
recipe's depth-2 trees. Both algorithms run the full round budget (AdaBoost with trees is given
the same tree spec). Times are medians over ``--repeats``, interleaved, after warming numba's
JIT, with one thread; the ratio is WeightBoost / AdaBoost.

Run:  python benchmarks/bench_weightboost.py                      (spambase and 100 000 x 20)
      python benchmarks/bench_weightboost.py --sizes 20000x20 --repeats 3   (quicker)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import attrs  # noqa: E402
import numpy as np  # noqa: E402

import boostkit  # noqa: E402


def datasets(sizes: list[tuple[int, int]]):
    spambase = boostkit.datasets.load("spambase")
    yield "spambase", spambase.X, spambase.y
    rng = np.random.default_rng(0)
    for n, d in sizes:
        X = rng.normal(size=(n, d))
        y = np.where(X[:, : max(2, d // 4)].sum(axis=1) + rng.normal(size=n) > 0, 1, -1)
        yield f"{n}x{d}", X, y


def recipes(learner: str):
    registry = boostkit.get_registry()
    weightboost = registry.algorithm("weightboost")
    proposal = "stump" if learner == "stump" else weightboost.proposal
    adaboost = attrs.evolve(registry.algorithm("adaboost"), proposal=proposal, stopping=())
    return adaboost, attrs.evolve(weightboost, proposal=proposal, stopping=())


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", default="100000x20", help="synthetic n x d, comma-separated")
    args = parser.parse_args()
    sizes = [tuple(int(float(v)) for v in item.lower().split("x")) for item in args.sizes.split(",") if item]

    print(f"{args.rounds} rounds, 1 thread, median of {args.repeats}; ratio = WeightBoost / AdaBoost")
    print(f"{'data':>12} {'learner':>8} {'fit ada':>9} {'fit wb':>9} {'ratio':>6} "
          f"{'pred ada':>9} {'pred wb':>9} {'ratio':>6}")
    for name, X, y in datasets(sizes):
        for learner in ("stump", "tree"):
            pair = recipes(learner)
            for recipe in pair:  # warm the JIT and the caches
                boostkit.Booster(recipe, n_rounds=2).fit(X, y).decision_function(X)
            fit_times, predict_times = ([], []), ([], [])
            for _ in range(args.repeats):
                for k, recipe in enumerate(pair):
                    seconds, model = timed(lambda: boostkit.Booster(recipe, n_rounds=args.rounds).fit(X, y))
                    fit_times[k].append(seconds)
                    predict_times[k].append(timed(lambda: model.decision_function(X))[0])
            fit = [statistics.median(t) for t in fit_times]
            predict = [statistics.median(t) for t in predict_times]
            print(f"{name:>12} {learner:>8} {fit[0]:8.3f}s {fit[1]:8.3f}s {fit[1] / fit[0]:6.2f} "
                  f"{predict[0]:8.4f}s {predict[1]:8.4f}s {predict[1] / predict[0]:6.2f}", flush=True)


if __name__ == "__main__":
    main()
