"""What the engine's check of the weights a reweighting hands back costs per round.

The engine checks every ``boostkit_reweight`` answer (shape, finite, non-negative, summing to 1:
one sum and one minimum when all is well). Its peer, measured in the same run, is the check it
replaced: the shape and ``np.isfinite(w).all()``. Both are timed alone on the weights of an
``n x d`` problem and inside a whole adaboost round (fits of T and T/10 rounds, the difference
divided by 0.9 T, so binning is not counted), with the old check swapped in for the peer. Medians
over ``--repeats``, after warming numba's JIT, with one thread.

Run:  python benchmarks/bench_hook_checks.py                 (1000 x 10, ~1 minute)
      python benchmarks/bench_hook_checks.py --sizes 1000x10,200000x20 --repeats 5
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import timeit  # noqa: E402

import numpy as np  # noqa: E402

import boostkit  # noqa: E402
from boostkit import engine  # noqa: E402
from boostkit.errors import HookError  # noqa: E402

from timing import median_time  # noqa: E402


def _previous_check(weights, shape, owner):
    """The check before: shape and finiteness only."""
    if weights.shape != shape:
        raise HookError(f"{owner} returned weights of shape {weights.shape}, expected {shape}")
    if not np.isfinite(weights).all():
        raise HookError(f"{owner} returned weights containing NaN or infinite values")


def _check_alone(check, weights, repeats: int) -> float:
    number = 2000
    times = [min(timeit.repeat(lambda: check(weights, weights.shape, "r"), number=number,
                               repeat=3)) / number for _ in range(repeats)]
    return float(np.median(times))


def _per_round(X, y, rounds: int, repeats: int) -> float:
    def fit(t):
        return boostkit.Booster("adaboost", n_rounds=t, random_state=0).fit(X, y)

    fit(rounds)  # JIT warm-up
    long = median_time(lambda: fit(rounds), repeats)
    short = median_time(lambda: fit(rounds // 10), repeats)
    return (long - short) / (0.9 * rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000x10")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    checked = engine._check_distribution
    print(f"{'size':>12}  {'check: now':>11}  {'before':>8}  {'extra':>8}  "
          f"{'round: now':>11}  {'before':>8}  {'ratio':>6}")
    for size in args.sizes.split(","):
        n, d = (int(v) for v in size.split("x"))
        rng = np.random.default_rng(0)
        X = rng.normal(size=(n, d))
        y = np.where(X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=n) > 0, 1, -1)
        weights = rng.random(n)
        weights /= weights.sum()
        now_alone = _check_alone(checked, weights, args.repeats)
        before_alone = _check_alone(_previous_check, weights, args.repeats)
        now_round = _per_round(X, y, args.rounds, args.repeats)
        engine._check_distribution = _previous_check
        try:
            before_round = _per_round(X, y, args.rounds, args.repeats)
        finally:
            engine._check_distribution = checked
        print(f"{size:>12}  {now_alone * 1e6:>9.2f}us  {before_alone * 1e6:>6.2f}us  "
              f"{(now_alone - before_alone) * 1e6:>+6.2f}us  {now_round * 1e6:>9.1f}us  "
              f"{before_round * 1e6:>6.1f}us  {now_round / before_round:>6.3f}")


if __name__ == "__main__":
    main()
