"""Round time of ``pav-adaboost`` and ``weightboost`` against an ``adaboost`` round, and where it goes.

1. Whole rounds: each recipe fits ``--rounds`` rounds on n x d standard normal features (default
   20 000 x 20) with the stopping rules off; an observer times every round after the first
   (which also bins the features). Also ``weightboost`` with AdaBoost's ``stump`` learner, so
   that its own work (eq. 4's factor, eq. 7's weights) is compared on the same weak learner.
   Ratios are to the ``adaboost`` round of the same run.
2. The hooks of one round on a fitted model's state, each timed alone: the proposals (``stump``,
   ``cmass``, the depth-2 ``tree``), the calibrations (``constant-alpha``, ``pav`` binned, and
   ``constant-alpha`` inside the ``input-dependent`` wrapper), and the reweightings
   (``exponential`` against ``weightboost-weights``).
3. Inside those hooks, each kernel against the way the same numbers were computed before it (the
   ratio is before / now): the quantile edges of a Cmass direction's scores (a bucket sort, against
   the engine's ``bin_features`` of them), their bins and class sums (a bucket table, against the
   engine's ``apply_bins`` and ``cell_class_sums``), a tree node's histogram and example counts
   (in place, in one pass, against the engine's histogram of a copy of the node's columns, once
   for the weights and once for the counts) and the entropy split search (one kernel call that
   screens the cuts and re-scores the few near the lowest, against ``best_split`` with the
   criterion on every valid cut).

Everything runs in this process on one thread (numba and BLAS pinned) after warming numba's JIT,
and is reported as the median over rounds and ``--repeats`` (the machines are shared).

Run:  python benchmarks/bench_rounds.py                 (~1 minute)
      python benchmarks/bench_rounds.py --size 2000x10 --rounds 10 --repeats 1   (smoke)
"""

from __future__ import annotations

import argparse
import os
import statistics

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import attrs  # noqa: E402
import numba  # noqa: E402
import numpy as np  # noqa: E402

import boostkit  # noqa: E402
from bench_pav import RoundTimer  # noqa: E402
from boostkit.criteria import entropy  # noqa: E402
from boostkit.data import bin_features  # noqa: E402
from boostkit.kernels.binning import apply_bins  # noqa: E402
from boostkit.kernels.histogram import cell_class_sums  # noqa: E402
from boostkit.splits import best_split, histogram  # noqa: E402
from boostkit_pav.calibrations import score_thresholds  # noqa: E402
from boostkit_pav.kernels import bin_class_sums  # noqa: E402
from boostkit_weightboost import trees  # noqa: E402
from boostkit_weightboost.kernels import node_histogram  # noqa: E402
from timing import median_time  # noqa: E402


def problem(n: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, : max(2, d // 4)].sum(axis=1) + rng.normal(size=n) > 0, 1, -1)
    return X, y


def recipes() -> dict[str, boostkit.Recipe]:
    registry = boostkit.get_registry()

    def unstopped(name, **changes):
        return attrs.evolve(registry.algorithm(name), stopping=(), **changes)

    return {
        "adaboost": unstopped("adaboost"),
        "pav-adaboost": unstopped("pav-adaboost"),
        "weightboost": unstopped("weightboost"),
        "weightboost, stumps": unstopped("weightboost", proposal="stump"),
    }


def bench_whole_rounds(X, y, rounds: int, repeats: int) -> None:
    print(f"1. whole rounds, {X.shape[0]:,d} x {X.shape[1]}: median over {repeats} x "
          f"{rounds - 1} rounds")
    timers = {name: RoundTimer() for name in recipes()}
    for name, recipe in recipes().items():  # warm the JIT
        boostkit.Booster(recipe, n_rounds=3).fit(X, y)
    for _ in range(repeats):  # interleaved, so a busy moment hits every recipe
        for name, recipe in recipes().items():
            boostkit.Booster(recipe, n_rounds=rounds, observers=[timers[name]]).fit(X, y)
    medians = {name: statistics.median(t.durations) for name, t in timers.items()}
    for name, seconds in medians.items():
        print(f"  {name:24s} {seconds * 1e3:8.3f} ms   {seconds / medians['adaboost']:6.2f}x adaboost")


def fitted_state(recipe, X, y, rounds: int):
    """The state after ``rounds`` rounds of ``recipe`` (margins and weights not uniform)."""
    captured = {}

    class Capture:
        @boostkit.hookimpl
        def boostkit_round_end(self, state, record):
            captured["state"] = state

    booster = boostkit.Booster(recipe, n_rounds=rounds, observers=[Capture()])
    booster.fit(X, y)
    return captured["state"]


def bench_hooks(X, y, repeats: int) -> None:
    print("2. one round's hooks, each alone (median of calls)")
    registry = boostkit.get_registry()

    def make(name, **params):
        return registry.component(name)(**params)

    state = fitted_state(recipes()["weightboost, stumps"], X, y, 10)
    tree_spec = registry.algorithm("weightboost").proposal
    stump, cmass = make("stump"), make("cmass", standardize=True)
    tree = make(tree_spec.name, **tree_spec.params)
    for component in (stump, cmass, tree):
        if hasattr(component, "boostkit_fit_start"):
            component.boostkit_fit_start(state=state)
    candidates = {}

    def propose(name, proposal):
        candidates[name] = proposal.boostkit_propose(state=state)

    calls = max(20, 10 * repeats)
    rows = [(f"propose: {name}", lambda name=name, p=p: propose(name, p))
            for name, p in (("stump", stump), ("cmass", cmass), ("tree (depth 2)", tree))]
    for _, call in rows:
        call()  # the candidates the calibrations below work on
    alpha, pav, wrapper = make("constant-alpha"), make("pav"), make("input-dependent", beta=0.5)
    pav.boostkit_fit_start(state=state)  # no back-fitting: a fresh term index
    exponential, weightboost_weights = make("exponential"), make("weightboost-weights", beta=0.5)

    def wrapped():
        inner = alpha.boostkit_calibrate(state=state, candidate=candidates["stump"])
        step = wrapper.boostkit_calibrate(state=state, candidate=candidates["stump"])
        next(step)
        try:
            step.send(inner)
        except StopIteration as done:
            return done.value

    rows += [
        ("calibrate: constant-alpha", lambda: alpha.boostkit_calibrate(
            state=state, candidate=candidates["stump"])),
        ("calibrate: input-dependent(constant-alpha)", wrapped),
        ("calibrate: pav (binned), cmass direction", lambda: pav.boostkit_calibrate(
            state=state, candidate=candidates["cmass"])),
        ("reweight: exponential", lambda: exponential.boostkit_reweight(state=state)),
        ("reweight: weightboost-weights", lambda: weightboost_weights.boostkit_reweight(state=state)),
    ]
    for name, call in rows:
        call()
        print(f"  {name:44s} {median_time(call, calls) * 1e6:9.1f} us")


def bench_kernels(X, y, repeats: int) -> None:
    print("3. kernels against what they replace (median of calls; ratio = before / now)")
    registry = boostkit.get_registry()
    state = fitted_state(recipes()["weightboost, stumps"], X, y, 10)
    data, weights = state.data, state.weights
    cmass = registry.component("cmass")(standardize=True)
    cmass.boostkit_fit_start(state=state)
    scores = cmass.boostkit_propose(state=state).scores
    n = scores.shape[0]
    calls = max(20, 10 * repeats)

    def edges_before():
        return bin_features(scores[:, None], 255).thresholds[0]

    def edges_now():
        return score_thresholds(scores, data.sample_weight, 255, np.random.default_rng(0))

    thresholds = edges_now()

    def sums_before():
        cells = np.empty((1, n), dtype=np.uint8)
        apply_bins(scores[:, None], thresholds, np.array([0, thresholds.shape[0]]), 0, cells)
        return cell_class_sums(cells[0], weights, data.is_pos, thresholds.shape[0] + 1)

    def sums_now():
        cells = np.empty(n, dtype=np.uint8)
        sums = np.zeros((thresholds.shape[0] + 1, 2))
        bin_class_sums(scores, thresholds, weights, data.is_pos, cells, sums)
        return sums

    binned = data.binned
    rows = np.flatnonzero(binned.codes[0] < np.median(binned.codes[0]))  # a node of ~half
    positive = (data.sample_weight > 0).view(np.uint8)

    def node_before():  # a copy of the node's columns, then the weights' and the counts' sums
        node_codes = np.take(binned.codes, rows, axis=1)
        hist = histogram(node_codes, weights[rows], data.is_pos[rows], binned.max_bins)
        counts = histogram(node_codes, positive[rows].astype(np.float64), data.is_pos[rows],
                           binned.max_bins)
        return hist, np.rint(counts.sum(axis=2)).astype(np.int64)

    def node_now():
        hist = np.zeros((binned.codes.shape[0], binned.max_bins, 2))
        counts = np.zeros((binned.codes.shape[0], binned.max_bins), dtype=np.int64)
        node_histogram(binned.codes, rows, weights, data.is_pos, positive, hist, counts)
        return hist, counts

    root = histogram(binned.codes, weights, data.is_pos, binned.max_bins)
    valid = trees.TreeLearner(min_samples_leaf=2)._valid(binned.bin_counts)

    node_neg, node_pos = root[0].sum(axis=0)

    pairs = [
        (f"edges of {n:,d} scores (255 bins)", edges_before, edges_now),
        (f"bins and class sums of {n:,d} scores", sums_before, sums_now),
        (f"histogram of a node of {rows.shape[0]:,d} rows", node_before, node_now),
        ("entropy split search, root",
         lambda: best_split(root, valid, trees._on_cuts(entropy, valid)),
         lambda: trees._entropy_split(root, valid, None, node_pos, node_neg)),
    ]
    print(f"  {'':44s}{'before':>10s}{'now':>10s}{'ratio':>8s}")
    for name, before, now in pairs:
        before(), now()
        t_before, t_now = median_time(before, calls), median_time(now, calls)
        print(f"  {name:44s}{t_before * 1e6:8.1f}us{t_now * 1e6:8.1f}us{t_before / t_now:7.1f}x")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="20000x20", help="n x d")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    numba.set_num_threads(1)
    n, d = (int(float(v)) for v in args.size.lower().split("x"))
    X, y = problem(n, d)
    bench_whole_rounds(X, y, args.rounds, args.repeats)
    bench_hooks(X, y, args.repeats)
    bench_kernels(X, y, args.repeats)


if __name__ == "__main__":
    main()
