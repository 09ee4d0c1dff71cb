"""adult as it comes (missing values, categorical columns): boostkit against LightGBM and
scikit-learn's HistGradientBoostingClassifier at the same number of stumps, in one run.

The data: adult's standard split (``split == "train"``: 32 561 rows, ``"test"``: 16 281), all 14
features with the 6 465 missing values and the 8 categorical columns, no preprocessing. boostkit
gets the loader's arrays with their :class:`boostkit.FeatureSchema` (category indices, NaN);
LightGBM and HistGradientBoosting get ``Dataset.frame()``, a DataFrame whose categorical columns
have the pandas ``category`` dtype, which both read natively (LightGBM's
``categorical_feature="auto"``, HistGradientBoosting's ``categorical_features="from_dtype"``),
with NaN as their native missing value.

Equal stumps: every model is T one-split trees. LightGBM ``num_leaves=2`` and HistGradientBoosting
``max_leaf_nodes=2`` grow one stump per round (binary log-loss, so one tree per round), without
early stopping. ``weightboost`` is the paper's recipe with the ``stump`` proposal in place of its
depth-2 tree, so that it too adds one stump per round. The peers run at two learning rates:
1.0, a full step per stump like AdaBoost's (no shrinkage anywhere: the fair pairing of "one
stump, one full step"), and 0.1, their default, which needs more stumps than T to converge, so
it shows what shrinkage costs at a fixed number of stumps. The accuracy target compares with
the better of the two LightGBM rows.

Timing: every library in this process, interleaved, after warming numba's JIT, one thread
(``NUMBA_NUM_THREADS``/``OMP_NUM_THREADS`` = 1, ``n_jobs=1``, ``num_threads=1``). Per-round time
is (fit with T rounds - fit with T/10 rounds) / 0.9 T, so binning and Dataset construction are
not counted per round (the full fit time is shown too); medians over ``--repeats``. Ratios are
against LightGBM at learning rate 1 measured in the same run.

Run:  python benchmarks/bench_tabular.py                     (200 stumps, 3 repeats, ~2 minutes)
      python benchmarks/bench_tabular.py --rounds 50 --repeats 1   (smoke)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import boostkit  # noqa: E402
from boostkit import datasets  # noqa: E402

BOOSTKIT = {
    "adaboost": {},
    "real-adaboost": {},
    "weightboost (stump)": {"proposal": "stump"},
}
LEARNING_RATES = (1.0, 0.1)
BASELINE = "lightgbm lr=1"


def load_split():
    """``(train, test)``: each ``(X, X_frame, y)`` with y in {-1, +1} (+1 = ">50K")."""
    data = datasets.load("adult")
    frame = data.frame()
    y = data.binary_target()
    parts = []
    for part in ("train", "test"):
        rows = np.flatnonzero(data.split == part)
        parts.append((np.ascontiguousarray(data.X[rows]),
                      frame.iloc[rows].reset_index(drop=True), y[rows]))
    return data.features, parts[0], parts[1]


def boostkit_fit(name, features):
    algorithm = name.split(" ")[0]

    def fit(train, rounds):
        X, _, y = train
        booster = boostkit.Booster(algorithm, n_rounds=rounds, n_jobs=1, **BOOSTKIT[name])
        return booster.fit(X, y, features=features)

    def predict(model, test):
        return model.predict(test[0])

    return fit, predict


def lightgbm_fit(rate):
    import lightgbm as lgb

    params = {"objective": "binary", "num_leaves": 2, "learning_rate": rate, "max_bin": 255,
              "num_threads": 1, "verbose": -1, "deterministic": True, "force_col_wise": True}

    def fit(train, rounds):
        _, frame, y = train
        # categorical_feature="auto": the pandas category columns; NaN is missing.
        return lgb.train(params, lgb.Dataset(frame, label=(y > 0).astype(int)),
                         num_boost_round=rounds)

    def predict(model, test):
        return np.where(model.predict(test[1]) > 0.5, 1.0, -1.0)

    return fit, predict


def sklearn_fit(rate):
    from sklearn.ensemble import HistGradientBoostingClassifier

    def fit(train, rounds):
        _, frame, y = train
        return HistGradientBoostingClassifier(
            max_iter=rounds, max_leaf_nodes=2, learning_rate=rate, max_bins=255,
            categorical_features="from_dtype", early_stopping=False, random_state=0,
        ).fit(frame, y)

    def predict(model, test):
        return model.predict(test[1])

    return fit, predict


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200, help="stumps T per model")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    features, train, test = load_split()
    contenders = {name: boostkit_fit(name, features) for name in BOOSTKIT}
    for rate in LEARNING_RATES:
        contenders[f"lightgbm lr={rate:g}"] = lightgbm_fit(rate)
    for rate in LEARNING_RATES:
        contenders[f"hist-gb lr={rate:g}"] = sklearn_fit(rate)

    # Warm numba's JIT (and its on-disk cache) and the peers' imports before timing.
    for fit, _ in contenders.values():
        fit(train, 3)

    few = max(1, args.rounds // 10)
    per_round: dict[str, list[float]] = {name: [] for name in contenders}
    full: dict[str, list[float]] = {name: [] for name in contenders}
    accuracy: dict[str, float] = {}
    for _ in range(args.repeats):
        for name, (fit, predict) in contenders.items():  # interleaved: noise hits all alike
            t_full, model = timed(lambda: fit(train, args.rounds))
            t_few, _ = timed(lambda: fit(train, few))
            per_round[name].append((t_full - t_few) / (args.rounds - few))
            full[name].append(t_full)
            accuracy[name] = float(np.mean(predict(model, test) == test[2]))

    print(f"adult: train {train[2].shape[0]} rows, test {test[2].shape[0]} rows, "
          f"{features.n_features} features ({int(features.categorical.sum())} categorical, "
          f"{int(np.isnan(train[0]).sum() + np.isnan(test[0]).sum())} missing values), no "
          "preprocessing")
    print(f"{args.rounds} stumps per model, medians of {args.repeats} repeats, 1 thread; "
          f"ratios against {BASELINE} in this run")
    print()
    base_time = statistics.median(per_round[BASELINE])
    best_lgb = max(accuracy[f"lightgbm lr={rate:g}"] for rate in LEARNING_RATES)
    print(f"{'model':>22} {'ms/round':>9} {'fit s':>7} {'x ' + BASELINE:>16} "
          f"{'test acc':>9} {'vs best lgb':>11}")
    for name in contenders:
        ms = statistics.median(per_round[name])
        print(f"{name:>22} {1e3 * ms:9.3f} {statistics.median(full[name]):7.3f} "
              f"{ms / base_time:16.2f} {accuracy[name]:9.4f} "
              f"{100 * (accuracy[name] - best_lgb):+10.2f}p")


if __name__ == "__main__":
    main()
