"""Per-round time of AdaBoost's reweightings: ``exponential`` against the margin-loss kernel.

Discrete AdaBoost (stumps, constant alpha, no-edge) is fitted with each reweighting in turn:
``exponential`` (the engine's dedicated kernel), ``margin-loss`` with the ``logistic``,
``madaboost`` and ``exponential`` losses (:mod:`boostkit.losses`, one fused kernel),
and, for reference, the same logistic weights written in numpy by a plugin (what a custom
reweighting cost before the kernel existed). A round's time is the time between two round ends
(a callback's timestamps), so binning and the first round are not counted; each repeat fits every
variant in turn (interleaved, after a warm-up fit that compiles or loads numba's kernels), with
numba and OpenMP pinned to one thread, and the table reports the median over all rounds of all
repeats and its ratio to ``exponential`` measured in the same run (a median over hundreds of
rounds shrugs off the bursts of a shared machine). The last columns time the reweighting alone
(one call on the margins of a fitted AdaBoost, median of 50), and the last line the cost of a
call on 8 examples (dispatch on the loss's numba type included).

Run:  python benchmarks/bench_losses.py                    (200 000 x 20, T = 100, ~2 minutes)
      python benchmarks/bench_losses.py --n 20000 --rounds 20 --repeats 1   (smoke)
"""

from __future__ import annotations

import argparse
import os
import time

os.environ["NUMBA_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"

import attrs  # noqa: E402
import numpy as np  # noqa: E402
from timing import median_time  # noqa: E402

import boostkit  # noqa: E402
from boostkit.kernels.boosting import exponential_distribution  # noqa: E402
from boostkit.losses import get_loss, margin_loss_distribution  # noqa: E402


@attrs.define
class NumpyLogisticWeights(boostkit.Reweighting):
    """Logistic weights D_1 / (1 + e^{yF}) and potential log sum D_1 log2(1 + e^{-yF}), in numpy
    (log space through ``np.logaddexp``): a custom reweighting as written without the kernel."""

    name = "numpy-logistic-weights"
    provides = frozenset({"potential"})

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        v = state.data.y * state.margin
        log_weights = np.log(state.initial_weights) - np.logaddexp(0.0, v)
        weights = np.exp(log_weights - log_weights.max())
        log_potential = np.log(np.sum(state.initial_weights * np.logaddexp(0.0, -v)) / np.log(2.0))
        return boostkit.Weights(weights / weights.sum(), float(log_potential))


class NumpyLossPlugin:
    @boostkit.hookimpl
    def boostkit_register_components(self, registry):
        registry.add_component(NumpyLogisticWeights)


def recipe(name: str, reweighting) -> boostkit.Recipe:
    return boostkit.Recipe(name=name, proposal="stump", calibration="constant-alpha",
                           reweighting=reweighting, stopping=("no-edge",))


VARIANTS = {
    "exponential": recipe("bench-exponential", "exponential"),
    "margin-loss logistic": recipe("bench-logistic", ("margin-loss", {"loss": "logistic"})),
    "margin-loss madaboost": recipe("bench-madaboost", ("margin-loss", {"loss": "madaboost"})),
    "margin-loss exponential": recipe("bench-ml-exponential",
                                      ("margin-loss", {"loss": "exponential"})),
    "numpy logistic (plugin)": recipe("bench-numpy-logistic", "numpy-logistic-weights"),
}


def make_data(n: int, d: int, seed: int = 0):
    # Noisy labels from a few informative features: no stump is perfect, so no fit stops early.
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (X[:, : max(1, d // 4)].sum(axis=1) + 2.0 * rng.standard_normal(n) > 0).astype(int)
    return X, y


def reweighting_alone(variant: str, margin, y, d1):
    """A zero-argument call of the variant's weight computation on these arrays."""
    if variant == "exponential":
        return lambda: exponential_distribution(margin, y, d1)
    if variant.startswith("margin-loss"):
        loss = get_loss(variant.split()[-1])
        return lambda: margin_loss_distribution(loss, margin, y, d1)
    state = type("State", (), {"data": type("Data", (), {"y": y})(), "margin": margin,
                               "initial_weights": d1})()
    component = NumpyLogisticWeights()
    return lambda: component.boostkit_reweight(state)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    boostkit.register_plugin(NumpyLossPlugin(), name="bench-numpy-loss")
    X, y = make_data(args.n, args.d)
    for spec in VARIANTS.values():  # warm-up: compile or load every kernel
        boostkit.Booster(spec, n_rounds=2).fit(X[:2000], y[:2000])

    per_round = {name: [] for name in VARIANTS}
    fitted_rounds = {}
    for _ in range(args.repeats):
        for name, spec in VARIANTS.items():
            ends = []
            stamp = [lambda state, record: ends.append(time.perf_counter())]
            model = boostkit.Booster(spec, n_rounds=args.rounds, callbacks=stamp).fit(X, y)
            fitted_rounds[name] = len(model.records)  # a no-edge stop would shorten the fit
            per_round[name].extend(np.diff(ends))

    model = boostkit.Booster("adaboost", n_rounds=args.rounds).fit(X, y)
    margin = model.decision_function(X)
    signs = np.where(y == 1, 1.0, -1.0)
    d1 = np.full(args.n, 1.0 / args.n)
    alone = {name: median_time(reweighting_alone(name, margin, signs, d1), 50)
             for name in VARIANTS}

    tiny = np.ones(8), np.ones(8), np.full(8, 1.0 / 8)  # the cost of a call, not of its loop
    overhead = {name: median_time(lambda: [call() for _ in range(1000)], 20) / 1000
                for name, call in ((name, reweighting_alone(name, *tiny))
                                   for name in ("exponential", "margin-loss logistic"))}

    base = float(np.median(per_round["exponential"]))
    print(f"AdaBoost per round at {args.n} x {args.d}, T = {args.rounds} (median over rounds of "
          f"{args.repeats} fits), one thread")
    print(f"{'reweighting':<26}{'rounds':>7}{'ms/round':>10}{'ratio':>8}{'reweight ms':>13}"
          f"{'ratio':>8}")
    for name in VARIANTS:
        ms = 1e3 * float(np.median(per_round[name]))
        print(f"{name:<26}{fitted_rounds[name]:>7}{ms:>10.2f}{ms / (1e3 * base):>8.2f}"
              f"{1e3 * alone[name]:>13.3f}{alone[name] / alone['exponential']:>8.2f}")
    print(f"call overhead (8 examples): exponential {1e6 * overhead['exponential']:.1f} us, "
          f"margin-loss logistic {1e6 * overhead['margin-loss logistic']:.1f} us")


if __name__ == "__main__":
    main()
