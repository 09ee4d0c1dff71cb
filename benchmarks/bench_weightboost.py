"""What WeightBoost's input-dependent regularizer costs: fit and predict time against AdaBoost.

First, the figure issue 17 asks for: a ``weightboost`` round (its depth-2 entropy trees, eq. 4's
factor, eq. 7's weights) against an ``adaboost`` round (its stumps) at ``--round-size`` (default
20 000 x 20), target within 2x. Both recipes (and ``weightboost`` with AdaBoost's ``stump``
learner, which isolates the regularizer and the reweighting) fit ``--round-count`` rounds with the
stopping rules off, interleaved ``--repeats`` times; an observer times every round after the first
(which also bins the features) and the medians are compared.

Then whole fits. The two recipes differ only in the regularizer (Jin et al. 2003, eq. 4: one factor
e^{-|beta F_{t-1}(x)|} per example and round, at fit and at predict time) and in the
reweighting (eq. 7: weights
e^{-yF - |beta F|}, and e^{-yF} for the exponential cost, the potential: two exponentials per
example where AdaBoost's reweighting has one). Each pair is timed with the same weak learner: the
``stump`` learner, where the extra per-example work weighs most, and the ``weightboost``
recipe's depth-2 trees. Both algorithms run the full round budget (AdaBoost with trees is given
the same tree spec). Times are medians over ``--repeats``, interleaved, after warming numba's
JIT, with one thread; the ratio is WeightBoost / AdaBoost.

Run:  python benchmarks/bench_weightboost.py                      (spambase and 100 000 x 20)
      python benchmarks/bench_weightboost.py --sizes 20000x20 --repeats 3   (quicker)
      python benchmarks/bench_weightboost.py --sizes ""                     (rounds only)
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
from bench_pav import RoundTimer  # noqa: E402


def synthetic(n: int, d: int, rng: np.random.Generator):
    X = rng.normal(size=(n, d))
    y = np.where(X[:, : max(2, d // 4)].sum(axis=1) + rng.normal(size=n) > 0, 1, -1)
    return X, y


def datasets(sizes: list[tuple[int, int]]):
    spambase = boostkit.datasets.load("spambase")
    yield "spambase", spambase.X, spambase.y
    rng = np.random.default_rng(0)
    for n, d in sizes:
        yield f"{n}x{d}", *synthetic(n, d, rng)


def recipes(learner: str):
    registry = boostkit.get_registry()
    weightboost = registry.algorithm("weightboost")
    proposal = "stump" if learner == "stump" else weightboost.proposal
    adaboost = attrs.evolve(registry.algorithm("adaboost"), proposal=proposal, stopping=())
    return adaboost, attrs.evolve(weightboost, proposal=proposal, stopping=())


def round_recipes() -> dict[str, boostkit.Recipe]:
    registry = boostkit.get_registry()
    adaboost = attrs.evolve(registry.algorithm("adaboost"), stopping=())
    weightboost = attrs.evolve(registry.algorithm("weightboost"), stopping=())
    return {"adaboost": adaboost, "weightboost": weightboost,
            "weightboost, stumps": attrs.evolve(weightboost, proposal="stump")}


def bench_rounds(n: int, d: int, rounds: int, repeats: int) -> None:
    """Median round time of each of :func:`round_recipes` against ``adaboost``'s, one run."""
    X, y = synthetic(n, d, np.random.default_rng(0))
    timers = {name: RoundTimer() for name in round_recipes()}
    for recipe in round_recipes().values():  # warm the JIT
        boostkit.Booster(recipe, n_rounds=3).fit(X, y)
    for _ in range(repeats):  # interleaved, so a busy moment hits every recipe
        for name, recipe in round_recipes().items():
            boostkit.Booster(recipe, n_rounds=rounds, observers=[timers[name]]).fit(X, y)
    medians = {name: statistics.median(t.durations) for name, t in timers.items()}
    print(f"rounds at {n:,d} x {d}, 1 thread: median over {repeats} x {rounds - 1} rounds "
          f"(target: weightboost within 2x adaboost)")
    for name, seconds in medians.items():
        print(f"  {name:22s} {seconds * 1e3:8.3f} ms  {seconds / medians['adaboost']:6.2f}x adaboost",
              flush=True)


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", default="100000x20", help="synthetic n x d, comma-separated; "
                        "empty: the rounds only")
    parser.add_argument("--round-size", default="20000x20", help="n x d of the round figure")
    parser.add_argument("--round-count", type=int, default=40, help="rounds per fit there")
    args = parser.parse_args()
    sizes = [tuple(int(float(v)) for v in item.lower().split("x")) for item in args.sizes.split(",") if item]
    bench_rounds(*(int(float(v)) for v in args.round_size.lower().split("x")), args.round_count,
                 args.repeats)
    if not sizes:
        return

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
