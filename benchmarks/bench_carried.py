"""The class histogram carried across rounds (``Booster(histogram="carried")``) against the one
summed over every row (``"exact"``): round time, and drift.

1. Round time of ``adaboost`` (stumps, stopping rules off) at 1 000 000 x 20 and 100 000 x 100
   standard normal features with noisy labels (``--sizes``), exact and carried, interleaved
   fits of the same seed (the bins of 1 000 000 rows come from a sample), the median over
   every round after the first (which also bins the features) of ``--repeats`` fits; the
   ratio exact / carried; the mean share of the rows on the smaller side of the stumps (the
   rows a carried round sums again). LightGBM's round with two leaves (``num_leaves=2``, 255
   bins, one thread) in the same run, if it is installed, timed per iteration by a callback.
   Also ``adaboost-mh`` over (example, class) pairs at 100 000 x 20 with 5 classes
   (``--multiclass``), whose histogram costs C times more per row.
2. Drift: ``adaboost`` on mushroom (separable) and adult for 1 000 rounds, the largest
   relative difference over the non-zero bins between the carried histogram and one summed
   over every row, after 50, 200 and 1 000 rounds (and its largest over the rounds up to
   then), with the default drift limit (max_growth 1e6) and without one.

Everything runs on one thread (numba and BLAS pinned) after warming numba's JIT.

Run:  python benchmarks/bench_carried.py               (~3 minutes)
      python benchmarks/bench_carried.py --sizes 20000x10 --multiclass 5000x5x3 --rounds 10 \
          --repeats 1 --drift-rounds 60                      (smoke)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import attrs  # noqa: E402
import numpy as np  # noqa: E402

import boostkit  # noqa: E402
from bench_pav import RoundTimer  # noqa: E402
from bench_rounds import problem  # noqa: E402
from boostkit.plane import CarriedHistogram  # noqa: E402
from boostkit.splits import histogram  # noqa: E402

#: The modes compared, as ``Booster(histogram=...)`` takes them.
MODES = {"exact": "exact", "carried": "carried"}


def unstopped(name: str) -> boostkit.Recipe:
    return attrs.evolve(boostkit.get_registry().algorithm(name), stopping=())


def smaller_side_share(model, X) -> float:
    """The mean share of the rows on the smaller side of the model's stumps."""
    shares = []
    for hypothesis in model.hypotheses:
        right = float(np.mean(hypothesis.cells(X)))
        shares.append(min(right, 1.0 - right))
    return float(np.mean(shares))


def lightgbm_round(X, y, rounds: int) -> float | None:
    """The median time of a LightGBM iteration with two leaves, one thread, or ``None``."""
    try:
        import lightgbm as lgb
    except ImportError:
        return None
    stamps = []
    params = {"objective": "binary", "num_leaves": 2, "max_bin": 255, "num_threads": 1,
              "verbose": -1, "deterministic": True, "force_col_wise": True}
    dataset = lgb.Dataset(X, label=(y > 0).astype(int)).construct()
    lgb.train(params, dataset, num_boost_round=rounds,
              callbacks=[lambda env: stamps.append(time.perf_counter())])
    return statistics.median(np.diff(stamps))


def multiclass_problem(n: int, d: int, n_classes: int, seed: int = 0):
    """Standard normal features, the class the argmax of the first ``n_classes`` plus noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.argmax(X[:, :n_classes] + rng.normal(size=(n, n_classes)), axis=1)


def bench_round_time(sizes, multiclass, rounds: int, repeats: int) -> None:
    print(f"1. round time, one thread: median over {repeats} x {rounds - 1} rounds")
    cases = [("adaboost", n, d, 2) for n, d in sizes]
    cases += [("adaboost-mh", n, d, c) for n, d, c in multiclass]
    for algorithm, n, d, n_classes in cases:
        X, y = problem(n, d) if n_classes == 2 else multiclass_problem(n, d, n_classes)
        timers = {mode: RoundTimer() for mode in MODES}
        models = {}
        for _ in range(repeats):  # interleaved: a busy neighbour slows both alike
            for mode, value in MODES.items():
                models[mode] = boostkit.Booster(unstopped(algorithm), n_rounds=rounds,
                                                random_state=0, histogram=value,
                                                observers=[timers[mode]]).fit(X, y)
        same = ([r.hypothesis for r in models["exact"].records]
                == [r.hypothesis for r in models["carried"].records])
        exact, carried = (statistics.median(timers[mode].durations) for mode in MODES)
        print(f"   {algorithm:<11} {n:>9,d} x {d:<3d} {n_classes} classes   exact "
              f"{exact * 1e3:7.2f} ms   carried {carried * 1e3:7.2f} ms   exact / carried "
              f"{exact / carried:5.2f}x   smaller side "
              f"{smaller_side_share(models['carried'], X):5.1%} of the rows   "
              f"same stumps: {same}")
        lgb = lightgbm_round(X, y, rounds) if n_classes == 2 else None
        if lgb is not None:
            print(f"   {'':>37} LightGBM, 2 leaves {lgb * 1e3:7.2f} ms   LightGBM / carried "
                  f"{lgb / carried:5.2f}x   LightGBM / exact {lgb / exact:5.2f}x")


class Drift:
    """Callback: the largest relative difference over the non-zero bins between the plane's
    histogram and one summed over every row, each round."""

    def __init__(self):
        self.relative: list[float] = []

    def __call__(self, state, record):
        kept = state.plane.class_histogram(state)
        binned = state.data.binned
        fresh = histogram(binned.codes, state.weights, state.data.is_pos, binned.max_bins, 1,
                          labels=state.data.labels)
        filled = fresh != 0.0
        self.relative.append(float((np.abs(kept - fresh)[filled] / fresh[filled]).max()))


def bench_drift(rounds: int) -> None:
    print(f"2. drift of the carried histogram, adaboost, {rounds} rounds: relative difference "
          "to the exact histogram (at the round; largest up to it)")
    checkpoints = [t for t in (50, 200, 1000) if t <= rounds]
    for name in ("mushroom", "adult"):
        if name not in boostkit.datasets.available():
            print(f"   {name}: not available")
            continue
        data = boostkit.datasets.load(name, dropna=True)
        for label, limits in (("max_growth 1e6", CarriedHistogram()),
                              ("no limit", CarriedHistogram(max_growth=np.inf))):
            drift = Drift()
            model = boostkit.Booster(unstopped("adaboost"), n_rounds=rounds, histogram=limits,
                                     callbacks=[drift]).fit(data.X, data.y,
                                                            features=data.features)
            done = len(drift.relative)
            text = "   ".join(
                f"{t}: {drift.relative[t - 1]:.1e} ({max(drift.relative[:t]):.1e})"
                for t in checkpoints if t <= done)
            print(f"   {name:<9} {label:<15} {text}"
                  + (f"   (stopped after {done}: {model.stop_reason})" if done < rounds else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000000x20,100000x100")
    parser.add_argument("--multiclass", default="100000x20x5",
                        help="n x d x classes of adaboost-mh fits ('' for none)")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--drift-rounds", type=int, default=1000)
    args = parser.parse_args()
    sizes = [tuple(int(v) for v in size.split("x")) for size in args.sizes.split(",")]
    X, y = problem(2000, 10)
    for mode in MODES.values():  # warm numba's JIT
        boostkit.Booster("adaboost", n_rounds=5, histogram=mode).fit(X, y)
    multiclass = [tuple(int(v) for v in size.split("x"))
                  for size in args.multiclass.split(",") if size]
    bench_round_time(sizes, multiclass, args.rounds, args.repeats)
    bench_drift(args.drift_rounds)


if __name__ == "__main__":
    main()
