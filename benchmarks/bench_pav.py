"""PAV (Wilbur et al. 2005, section 2.1) against scikit-learn, and binned against sorted rounds.

Everything is timed in this process, JIT warmed first, one thread (numba and BLAS pinned), and
reported as the median over ``--repeats`` with ratios to the peer measured in the same run,
the two called in turn (the machines are shared: absolute times alone say little).

1. Weighted isotonic regression of n labels on scores, n = 1e5, 1e6, 1e7:
   ``boostkit_pav.isotonic.isotonic_regression`` (pool ties, the O(N) PAV of section 2.1)
   against ``sklearn.isotonic.IsotonicRegression(increasing=True).fit``, on scores with ties
   (rounded normals, ~7 000 distinct values: pooled by hashing, no sort of the n examples) and
   on distinct scores (normals: bucketed by their bits, sorted bucket by bucket in cache and
   pooled as they come, ``boostkit_pav.kernels.sort_pool_ties``); the stable sort the binning
   uses is shown too (``boostkit.kernels.sorting.stable_argsort`` against
   ``np.argsort(kind="stable")``).
2. One PAV-AdaBoost round at n = 1e6: the ``pav`` calibration hook in its approximate (binned,
   section 5) form against its pure (sorted) form, on a score column whose bins the engine made
   once per fit, and on a new real-valued hypothesis (binned on its own training scores); then
   whole rounds of ``pav-adaboost-finite`` (score columns: propose, calibrate, update the margins,
   reweight), binned against sorted, timed round by round by an observer.

Run:  python benchmarks/bench_pav.py                       (~2 minutes)
      python benchmarks/bench_pav.py --sizes 1e5 --round-size 1e5 --repeats 1   (smoke)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402

import boostkit  # noqa: E402
from boostkit.data import TrainingData  # noqa: E402
from boostkit.kernels.sorting import stable_argsort  # noqa: E402
from boostkit_pav.calibrations import PavCalibration  # noqa: E402
from boostkit_pav.isotonic import isotonic_regression  # noqa: E402
from boostkit_pav.learners import Projection, ScoreColumns  # noqa: E402
from timing import interleaved_medians, median_time  # noqa: E402


def isotonic_data(n: int, seed: int = 0, ties: bool = True):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=n)
    if ties:
        scores = np.round(scores, 3)  # ~7 000 distinct values: heavy ties
    labels = (rng.random(n) < 1.0 / (1.0 + np.exp(-2.0 * scores))).astype(np.float64)
    weights = rng.exponential(size=n)
    return scores, labels, weights


def bench_isotonic(sizes, repeats):
    from sklearn.isotonic import IsotonicRegression

    print("1. weighted isotonic regression")
    print(f"  {'scores':>9s} {'n':>10s} {'boostkit_pav':>13s} "
          f"{'scikit-learn':>13s} {'sklearn/ours':>13s} {'pools':>7s}")
    for ties in (True, False):
        for n in sizes:
            scores, labels, weights = isotonic_data(n, ties=ties)
            reps = max(1, repeats if n < 10_000_000 else min(repeats, 3))
            ours, theirs = interleaved_medians([
                lambda: isotonic_regression(scores, weights, labels),
                lambda: IsotonicRegression(increasing=True).fit(scores, labels,
                                                               sample_weight=weights),
            ], reps)
            fit = isotonic_regression(scores, weights, labels)
            reference = IsotonicRegression(increasing=True).fit(scores, labels, sample_weight=weights)
            gap = np.abs(fit.fitted() - reference.predict(fit.points)).max()
            assert gap < 1e-12, f"isotonic fits differ by {gap:g} at n = {n}"
            print(f"  {'tied' if ties else 'distinct':>9s} {n:>10,d} {ours * 1e3:>11.1f}ms "
                  f"{theirs * 1e3:>11.1f}ms {theirs / ours:>12.2f}x "
                  f"{fit.n_pools:>7d}", flush=True)
    print(f"  stable argsort of distinct scores {'radix':>13s} {'numpy':>13s} {'numpy/radix':>12s}")
    for n in sizes:
        scores = isotonic_data(n, ties=False)[0]
        reps = max(1, repeats if n < 10_000_000 else min(repeats, 3))
        ours, theirs = interleaved_medians(
            [lambda: stable_argsort(scores), lambda: np.argsort(scores, kind="stable")], reps)
        assert np.array_equal(stable_argsort(scores), np.argsort(scores, kind="stable"))
        print(f"  {n:>32,d} {ours * 1e3:>11.1f}ms {theirs * 1e3:>11.1f}ms {theirs / ours:>11.2f}x",
              flush=True)


def round_state(n: int, seed: int = 1) -> boostkit.BoostState:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + rng.normal(size=n) > 0, 1, -1)
    data = TrainingData(X, y)
    return boostkit.BoostState(
        data=data, weights=rng.dirichlet(np.ones(n)), margin=np.zeros(n), n_rounds=1,
        rng=np.random.default_rng(0), hook=None, n_jobs=1,
    )


def bench_round(n: int, repeats: int, rounds: int):
    print(f"2. one PAV-AdaBoost round at n = {n:,d}")
    state = round_state(n)
    state.round = 1
    columns = ScoreColumns()
    columns.boostkit_fit_start(state=state)
    column = columns.boostkit_propose(state=state)  # the engine binned the columns once
    new_hypothesis = boostkit.Candidate(Projection(np.array([1.0, 0.5])), state.data.X)
    new_hypothesis.scores  # evaluated once, as a proposal does
    binned, exact = PavCalibration(), PavCalibration(bins=None)
    cases = {
        "calibration, score column (cells)": (column, binned, exact),
        "calibration, new hypothesis": (new_hypothesis, binned, exact),
    }
    print(f"  {'':44s}{'binned':>10s}{'sorted':>10s}{'sorted/binned':>15s}")
    for name, (candidate, fast, slow) in cases.items():
        t_fast = median_time(lambda: fast.boostkit_calibrate(state=state, candidate=candidate), repeats)
        t_slow = median_time(lambda: slow.boostkit_calibrate(state=state, candidate=candidate), repeats)
        print(f"  {name:44s}{t_fast * 1e3:8.1f}ms{t_slow * 1e3:8.1f}ms{t_slow / t_fast:14.1f}x")
    X, y = state.data.X, state.data.y

    def per_round(bins):
        timer = RoundTimer()
        for _ in range(repeats):
            boostkit.Booster("pav-adaboost-finite", n_rounds=rounds, params={"calibration": {"bins": bins}},
                             observers=[timer]).fit(X, y)
        return statistics.median(timer.durations)

    t_fast, t_slow = per_round(255), per_round(None)
    name = "whole round, pav-adaboost-finite"
    print(f"  {name:44s}{t_fast * 1e3:8.1f}ms{t_slow * 1e3:8.1f}ms{t_slow / t_fast:14.1f}x")


class RoundTimer:
    """Observer: the wall time of every round after the first (which also bins the features)."""

    def __init__(self) -> None:
        self.durations: list[float] = []

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        self._last = None

    @boostkit.hookimpl
    def boostkit_round_end(self, state, record):
        now = time.perf_counter()
        if self._last is not None:
            self.durations.append(now - self._last)
        self._last = now


def warm_up():
    scores, labels, weights = isotonic_data(1000)
    isotonic_regression(scores, weights, labels)
    stable_argsort(scores)
    state = round_state(1000)
    state.round = 1
    columns = ScoreColumns()
    columns.boostkit_fit_start(state=state)
    candidate = columns.boostkit_propose(state=state)
    for calibration in (PavCalibration(), PavCalibration(bins=None)):
        calibration.boostkit_calibrate(state=state, candidate=candidate)
    boostkit.Booster("pav-adaboost-finite", n_rounds=3).fit(state.data.X, state.data.y)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e5,1e6,1e7", help="isotonic regression sizes")
    parser.add_argument("--round-size", default="1e6", help="examples for the round timings")
    parser.add_argument("--rounds", type=int, default=6, help="rounds per fit of the whole-round timing")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    numba.set_num_threads(1)
    warm_up()
    bench_isotonic([int(float(s)) for s in args.sizes.split(",")], args.repeats)
    bench_round(int(float(args.round_size)), args.repeats, args.rounds)


if __name__ == "__main__":
    main()
