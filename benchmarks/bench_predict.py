"""Prediction time of a 200-stump model against LightGBM's and its exported ONNX graph's, in one
run.

Both models are fitted on the same 20 000 rows (boostkit's ``adaboost``; LightGBM with
``num_leaves=2``, one stump per round), then score ``--rows`` fresh rows (default 1 000 000 x 20):
boostkit's ``decision_function`` (its threshold terms flattened into one compiled pass,
:mod:`boostkit.kernels.predict`) against LightGBM's ``predict(raw_score=True)``. Both run with
the same number of threads (``--threads``: numba's and LightGBM's ``num_threads``), after a
warm-up call, interleaved; medians over ``--repeats`` and their ratio, plus nanoseconds per row
and stump. The term-by-term evaluation (every term's ``values``) is timed too, as the baseline
the compiled pass replaces.

With the ``onnx`` extra, the model's graph (:func:`boostkit.onnx.to_onnx`) runs in onnxruntime
with as many intra-op threads: its margins alone, and all its outputs (labels, probabilities,
margins) against boostkit's ``predict_proba``, for a float64 input and for a float32 one
(widened in the graph). Without LightGBM (the ``bench`` extra) its row is left out and the
ratios are to boostkit's ``decision_function``.

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

    import numpy as np

    import boostkit
    from boostkit.components import Candidate

    try:
        import lightgbm
    except ImportError:
        lightgbm = None
    try:
        import onnxruntime

        from boostkit.onnx import to_onnx
    except ImportError:
        onnxruntime = None

    rng = np.random.default_rng(0)
    X_train = rng.normal(size=(20_000, args.features))
    y_train = (X_train[:, 0] + X_train[:, 1] * X_train[:, 2] + rng.normal(size=20_000)) > 0
    X = rng.normal(size=(args.rows, args.features))

    model = boostkit.Booster("adaboost", n_rounds=args.stumps, random_state=0).fit(X_train, y_train)

    def term_by_term():
        margin = np.zeros(X.shape[0])
        for h, c in zip(model.hypotheses, model.contributions):
            margin += c.values(Candidate(h, X), margin)
        return margin

    runs = {
        "boostkit": lambda: model.decision_function(X),
        "term by term": term_by_term,
    }
    if lightgbm is not None:
        booster = lightgbm.train(
            {"objective": "binary", "num_leaves": 2, "learning_rate": 1.0, "verbose": -1,
             "num_threads": args.threads, "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 0.0},
            lightgbm.Dataset(X_train, y_train.astype(float)), num_boost_round=args.stumps)
        runs["lightgbm"] = lambda: booster.predict(X, raw_score=True, num_threads=args.threads)
    if onnxruntime is not None:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = args.threads
        options.inter_op_num_threads = 1
        X32 = X.astype(np.float32)
        sessions = {dtype: onnxruntime.InferenceSession(
            to_onnx(model, dtype=dtype).SerializeToString(), options,
            providers=["CPUExecutionProvider"]) for dtype in ("float64", "float32")}
        runs["boostkit proba"] = lambda: model.predict_proba(X)
        runs["onnx margin"] = lambda: sessions["float64"].run(["margin"], {"X": X})[0]
        runs["onnx all"] = lambda: sessions["float64"].run(None, {"X": X})
        runs["onnx all f32"] = lambda: sessions["float32"].run(None, {"X": X32})
    times = {name: [] for name in runs}
    for fn in runs.values():
        fn()  # JIT and caches warm
    for _ in range(args.repeats):
        for name, fn in runs.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    assert np.array_equal(runs["boostkit"](), term_by_term())
    if onnxruntime is not None:  # the graph serves the model: labels identical, margins to 1e-12
        label, _, margin = runs["onnx all"]()
        assert np.array_equal(label, model.predict(X))
        assert np.abs(margin - runs["boostkit"]()).max() <= 1e-12 * max(1.0, np.abs(margin).max())
    n_stumps = len(model.hypotheses)
    peer = "lightgbm" if lightgbm is not None else "boostkit"
    print(f"{args.rows} x {args.features} rows, {n_stumps} stumps"
          + (f" (LightGBM {booster.num_trees()} trees)" if lightgbm is not None else
             " (LightGBM not installed: pip install -e '.[bench]')")
          + f", {args.threads} thread(s), medians of {args.repeats}")
    reference = statistics.median(times[peer])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:14s} {median * 1e3:9.1f} ms  {median / (args.rows * n_stumps) * 1e9:6.2f} "
              f"ns per row and stump  {reference / median:5.2f}x {peer}'s speed")

if __name__ == "__main__":
    main()
