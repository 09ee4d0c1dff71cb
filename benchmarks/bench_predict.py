"""Prediction time of a 200-stump model against LightGBM's, in one run.

Both models are fitted on the same 20 000 rows (boostkit's ``adaboost``; LightGBM with
``num_leaves=2``, one stump per round), then score ``--rows`` fresh rows (default 1 000 000 x 20):
boostkit's ``decision_function`` (its threshold terms flattened into one compiled pass,
:mod:`boostkit.kernels.predict`) against LightGBM's ``predict(raw_score=True)``. Both run with
the same number of threads (``--threads``: numba's and LightGBM's ``num_threads``), after a
warm-up call, interleaved; medians over ``--repeats`` and their ratio, plus nanoseconds per row
and stump. The term-by-term evaluation (every term's ``values``) is timed too, as the baseline
the compiled pass replaces.

Run:  python benchmarks/bench_predict.py                       (1 thread, ~1 minute)
      python benchmarks/bench_predict.py --threads 2
      python benchmarks/bench_predict.py --rows 100000 --repeats 3   (smoke)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--stumps", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    os.environ["NUMBA_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = str(args.threads)

    import lightgbm
    import numpy as np

    import boostkit
    from boostkit.components import Candidate

    rng = np.random.default_rng(0)
    X_train = rng.normal(size=(20_000, args.features))
    y_train = (X_train[:, 0] + X_train[:, 1] * X_train[:, 2] + rng.normal(size=20_000)) > 0
    X = rng.normal(size=(args.rows, args.features))

    model = boostkit.Booster("adaboost", n_rounds=args.stumps, random_state=0).fit(X_train, y_train)
    booster = lightgbm.train(
        {"objective": "binary", "num_leaves": 2, "learning_rate": 1.0, "verbose": -1,
         "num_threads": args.threads, "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 0.0},
        lightgbm.Dataset(X_train, y_train.astype(float)), num_boost_round=args.stumps)

    def term_by_term():
        margin = np.zeros(X.shape[0])
        for h, c in zip(model.hypotheses, model.contributions):
            margin += c.values(Candidate(h, X), margin)
        return margin

    runs = {
        "boostkit": lambda: model.decision_function(X),
        "lightgbm": lambda: booster.predict(X, raw_score=True, num_threads=args.threads),
        "term by term": term_by_term,
    }
    times = {name: [] for name in runs}
    for fn in runs.values():
        fn()  # JIT and caches warm
    for _ in range(args.repeats):
        for name, fn in runs.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    assert np.array_equal(runs["boostkit"](), term_by_term())
    n_stumps = len(model.hypotheses)
    print(f"{args.rows} x {args.features} rows, {n_stumps} stumps (LightGBM "
          f"{booster.num_trees()} trees), {args.threads} thread(s), medians of {args.repeats}")
    lgb = statistics.median(times["lightgbm"])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:13s} {median * 1e3:9.1f} ms  {median / (args.rows * n_stumps) * 1e9:6.2f} "
              f"ns per row and stump  {lgb / median:5.2f}x LightGBM's speed")


if __name__ == "__main__":
    main()
