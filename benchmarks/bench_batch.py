"""Compiled round batches: how the batch kernel calls its components, and where a batch's time goes.

Three ways of composing ``adaboost``'s compiled forms (the stump's error search, constant-alpha's
values, the exponential rule's factors, no-edge) into the batch kernel
(:func:`boostkit.kernels.rounds.run_batch`), timed on the same 200 rounds:

* ``first-class``: the components as first-class functions (``numba.types.FunctionType``),
  the kernel compiled once for every recipe (what boostkit runs);
* ``dispatchers``: the components passed as numba dispatchers, the kernel compiled for this
  recipe (its compile time is shown);
* ``inlined``: the kernel's source with the components' calls replaced by direct calls of
  ``inline="always"`` functions, compiled for this recipe: the hand-fused loop.

Then a whole fit per round of each of ``--recipes`` (``adaboost``), batched and one by one,
the Python cost of building a batch's records, hypotheses and contributions from its arrays,
and the stump's compiled searches alone (``error``, ``z``, ``squared-error``: one call per
round on the ``(d, B, 2)`` class histogram), on the histograms of D_t of every 10th round of a
``real-adaboost`` fit.

One thread, CPU time (``time.process_time``), medians of ``--repeats``.

Run:  NUMBA_NUM_THREADS=1 python benchmarks/bench_batch.py [--size 1000x10] [--rounds 200]
"""

from __future__ import annotations

import argparse
import inspect
import os
import statistics
import textwrap
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402

import boostkit  # noqa: E402
from boostkit import engine  # noqa: E402
from boostkit.compiled import (CALIBRATION, HISTOGRAM, MARGIN_WEIGHTS,  # noqa: E402
                               REWEIGHTING, SEARCH, STOPPING, compile_form)
from boostkit.data import TrainingData  # noqa: E402
from boostkit.kernels import rounds  # noqa: E402
from boostkit.splits import histogram  # noqa: E402
from boostkit_adaboost.coefficients import constant_alpha_values  # noqa: E402
from boostkit_adaboost.reweighting import exponential_log_factors  # noqa: E402
from boostkit_adaboost.stopping import no_edge_code  # noqa: E402
from boostkit_adaboost.stumps import (COMPILED_SEARCHES, compiled_search,  # noqa: E402
                                     error_search)


def make_data(n: int, d: int, seed: int = 0):
    from sklearn.datasets import make_classification

    return make_classification(n_samples=n, n_features=d, n_informative=max(2, d // 2),
                               n_redundant=d // 4, flip_y=0.05, random_state=seed)


def inlined_kernel():
    """run_batch with adaboost's components called directly (inline="always"), per recipe."""
    source = textwrap.dedent(inspect.getsource(rounds.run_batch))
    for call, name in (("search(searched", "_search_(searched"), ("calibrate(wneg", "_values_(wneg"),
                       ("log_factors_of(values", "_factors_(values"),
                       ("margin_weights(margin", "_weights_(margin"),
                       ("histogram_of(codes", "_histogram_(codes"),
                       ("stop0(t + 1", "_stop_(t + 1"),
                       ("stop1(t + 1", "_never_(t + 1"), ("stop2(t + 1", "_never_(t + 1")):
        assert call in source, call
        source = source.replace(call, name)
    namespace = dict(vars(rounds))
    inline = numba.njit(inline="always", nogil=True)
    namespace.update(_search_=inline(error_search), _values_=inline(constant_alpha_values),
                     _factors_=inline(exponential_log_factors),
                     _weights_=inline(rounds._no_margin_weights),
                     _histogram_=inline(rounds._no_histogram), _stop_=inline(no_edge_code),
                     _never_=inline(rounds._never_stop))
    exec(compile(source, "<inlined run_batch>", "exec"), namespace)
    return numba.njit(nogil=True)(namespace["run_batch"])


def kernel_arguments(data, n_rounds, components):
    binned = data.binned
    search, own_histogram, values, factors, weights, stop, never = components
    d1 = data.initial_weights
    empty = np.zeros(0)
    outputs = (np.empty((n_rounds, 2), dtype=np.int64), np.empty((n_rounds, 2, 2)),
               np.empty((n_rounds, 2)), np.empty((n_rounds, 2)), np.empty((n_rounds, 1)),
               np.empty((n_rounds, 3)), np.zeros(2, dtype=np.int64))
    return (binned.codes, data.is_pos, data.y, d1, d1.copy(), np.zeros(d1.shape[0]),
            binned.split_mask, binned.bin_counts, search, own_histogram, empty, values,
            np.zeros(1), factors, weights, empty, stop, np.zeros(1), never, empty, never, empty,
            1e6, 0, True, False, 0, 0.0, *outputs)


def time_kernel(kernel, data, n_rounds, components, repeats):
    times = []
    for _ in range(repeats):
        args = kernel_arguments(data, n_rounds, components)
        start = time.process_time()
        ran = kernel(*args)
        times.append(time.process_time() - start)
    return statistics.median(times) / ran * 1e6, ran


@numba.njit(nogil=True)
def _search_calls(search, hists, valid, repeats):
    # Every histogram searched ``repeats`` times: the calls of a batch, without its other work.
    d, n_bins = hists.shape[1], hists.shape[2]
    scores, sides, cell_scores = np.empty((d, n_bins - 1)), np.empty((2, 2)), np.empty(2)
    params = np.zeros(0)
    chosen = 0
    for _ in range(repeats):
        for i in range(hists.shape[0]):
            chosen += search(hists[i], valid, scores, sides, cell_scores, params)
    return chosen


def round_histograms(X, y, data, n_rounds):
    """The ``(d, B, 2)`` class histograms of D_t of every 10th round of a ``real-adaboost``
    fit (D_t from its margins: exp(-y F_t), normalised)."""
    sign = np.where(data.is_pos.astype(bool), 1.0, -1.0)
    model = boostkit.Booster("real-adaboost", n_rounds=n_rounds).fit(X, y)
    hists = []
    for t, margin in enumerate(model.staged_decision_function(X)):
        if t % 10 == 0:
            exponent = -sign * np.asarray(margin).reshape(-1)
            weights = np.exp(exponent - exponent.max())
            hists.append(histogram(data.binned.codes, weights / weights.sum(), data.is_pos,
                                   data.binned.max_bins))
    return np.ascontiguousarray(np.stack(hists))


def time_searches(X, y, data, n_rounds, repeats):
    """Microseconds per call of each of the stump's compiled searches, medians of ``repeats``."""
    hists = round_histograms(X, y, data, n_rounds)
    valid = np.ascontiguousarray(data.binned.split_mask)
    calls = 50
    times = {}
    for criterion in COMPILED_SEARCHES:
        search = compiled_search(criterion)
        _search_calls(search, hists, valid, 1)
        runs = []
        for _ in range(repeats):
            start = time.process_time()
            _search_calls(search, hists, valid, calls)
            runs.append(time.process_time() - start)
        times[criterion] = statistics.median(runs) / (calls * hists.shape[0]) * 1e6
    return times, hists.shape[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1000x10")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--recipes", default="adaboost",
                        help="comma-separated recipes whose whole fits are timed")
    args = parser.parse_args()
    n, d = (int(v) for v in args.size.lower().split("x"))
    X, y = make_data(n, d)
    data = TrainingData(X, y, None, max_bins=255, rng=np.random.default_rng(0))
    compiled = (compiled_search("error"), rounds.no_histogram(),
                compile_form(constant_alpha_values, CALIBRATION),
                compile_form(exponential_log_factors, REWEIGHTING), rounds.no_margin_weights(),
                compile_form(no_edge_code, STOPPING), rounds.never_stop())
    first_class = tuple(rounds.first_class(f, s) for f, s in zip(
        compiled, (SEARCH, HISTOGRAM, CALIBRATION, REWEIGHTING, MARGIN_WEIGHTS, STOPPING,
                   STOPPING)))
    dispatchers = tuple(numba.njit(nogil=True)(f) for f in (
        error_search, rounds._no_histogram, constant_alpha_values, exponential_log_factors,
        rounds._no_margin_weights, no_edge_code, rounds._never_stop))
    print(f"{n} x {d}, {args.rounds} rounds, one thread, CPU time, medians of {args.repeats}")
    rows = []
    start = time.process_time()
    kernel = rounds.batch_kernel()
    rows.append(("first-class", kernel, first_class, time.process_time() - start))
    per_recipe = numba.njit(nogil=True)(rounds.run_batch)
    start = time.process_time()
    per_recipe(*kernel_arguments(data, 2, dispatchers))
    rows.append(("dispatchers", per_recipe, dispatchers, time.process_time() - start))
    start = time.process_time()
    inlined = inlined_kernel()
    inlined(*kernel_arguments(data, 2, first_class))
    rows.append(("inlined", inlined, first_class, time.process_time() - start))
    print(f"{'kernel':>12} {'us/round':>9} {'rounds':>7} {'one-round call us':>18} "
          f"{'first call s':>13}")
    for name, kernel, components, compile_time in rows:
        per_round, ran = time_kernel(kernel, data, args.rounds, components, args.repeats)
        one_round, _ = time_kernel(kernel, data, 1, components, args.repeats)
        print(f"{name:>12} {per_round:9.2f} {ran:7d} {one_round:18.1f} {compile_time:13.2f}")

    # A whole fit, per round: T and T/10 rounds, the difference over 0.9 T (binning not counted).
    def fit_time(recipe, compiled, rounds_):
        times = []
        for _ in range(args.repeats):
            start = time.process_time()
            boostkit.Booster(recipe, n_rounds=rounds_, compiled_rounds=compiled).fit(X, y)
            times.append(time.process_time() - start)
        return statistics.median(times)

    for recipe in args.recipes.split(","):
        for compiled in (True, False):
            fit_time(recipe, compiled, 5)
            per_round = (fit_time(recipe, compiled, args.rounds)
                         - fit_time(recipe, compiled, args.rounds // 10)
                         ) / (0.9 * args.rounds) * 1e6
            print(f"Booster({recipe!r}, compiled_rounds={compiled}): {per_round:.1f} us a round")

    # The Python cost of a batch's records: run_batch_rounds' time minus its kernel call's.
    for recipe in args.recipes.split(","):
        per_round = records_time(recipe, X, y, args.rounds, args.repeats)
        print(f"run_batch_rounds of {recipe}: {per_round['batch']:.1f} us a round, the kernel "
              f"{per_round['kernel']:.1f} us, the records, hypotheses and contributions "
              f"{per_round['batch'] - per_round['kernel']:.1f} us")

    searches, n_hists = time_searches(X, y, data, args.rounds, args.repeats)
    print(f"the stump's searches alone ({n_hists} histograms of real-adaboost's D_t): "
          + ", ".join(f"{criterion} {us:.2f} us" for criterion, us in searches.items())
          + " a call")


def records_time(recipe, X, y, n_rounds, repeats):
    """Microseconds a round of ``recipe``'s batched fits spent in run_batch_rounds and in its
    kernel calls (the rest: the records, hypotheses and contributions made in Python)."""
    spent = {"batch": 0.0, "kernel": 0.0, "rounds": 0}
    batch, make_kernel = engine.run_batch_rounds, rounds.batch_kernel
    kernel = make_kernel()

    def timed_kernel(*kernel_args):
        start = time.process_time()
        ran = kernel(*kernel_args)
        spent["kernel"] += time.process_time() - start
        spent["rounds"] += ran
        return ran

    def timed_batch(*batch_args):
        start = time.process_time()
        reason = batch(*batch_args)
        spent["batch"] += time.process_time() - start
        return reason

    boostkit.Booster(recipe, n_rounds=5).fit(X, y)  # compiled and loaded before timing
    engine.run_batch_rounds, rounds.batch_kernel = timed_batch, lambda: timed_kernel
    try:
        for _ in range(repeats):
            boostkit.Booster(recipe, n_rounds=n_rounds).fit(X, y)
    finally:
        engine.run_batch_rounds, rounds.batch_kernel = batch, make_kernel
    return {k: spent[k] / spent["rounds"] * 1e6 for k in ("batch", "kernel")}


if __name__ == "__main__":
    main()
