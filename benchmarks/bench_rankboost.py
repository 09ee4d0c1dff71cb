"""RankBoost per-round cost: the bipartite O(n) form against explicit pairs, in one run.

Timed in this process, interleaved, after warming numba's JIT, one thread (numba and BLAS); the
tables report medians over ``--repeats`` and ratios against the peer measured in the same run,
since the machines are shared and an absolute time alone says little.

* Per-round time of a fit: a fit of 1 + R rounds minus a fit of 1 round, divided by R, so binning
  and the first (compiling) call are not counted. Early stops are avoided by noisy labels.
* ``large``: one bipartite round at ``--n`` examples (default 200 000: 10^10 pairs) against one
  round of discrete AdaBoost on the same data (the same stump histogram kernel), plus the wall
  time of a whole 1-round fit including binning.
* ``small``: at small n, bipartite ``rankboost`` against ``rankboost-pairs`` (the same stumps with
  the pair distribution kept explicitly, O(n- n+) per round) and a pure-numpy naive update
  of an explicit n- x n+ matrix D (D <- D exp(alpha (h(x0) - h(x1))) / Z and r of one ranker,
  the least any all-pairs round must do). The naive cost per pair extrapolates to ``--n``.

Run:  python benchmarks/bench_rankboost.py                       (~1-2 minutes)
      python benchmarks/bench_rankboost.py --n 50000 --small 500,1000 --repeats 1   (smoke)
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


def make_data(n: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=2.0, size=n) > 0.5, 1.0, -1.0)
    return X, y


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


# The explicit pairs of the small cases may exceed the default budget of 10^7 pairs.
PARAMS = {"rankboost-pairs": {"reweighting": {"max_pairs": 10**9}}}


def per_round(algorithm: str, X, y, rounds: int) -> tuple[float, float]:
    """(seconds per round, seconds of a whole 1-round fit)."""
    params = PARAMS.get(algorithm, {})
    one = timed(lambda: boostkit.Booster(algorithm, n_rounds=1, params=params).fit(X, y))
    many = timed(lambda: boostkit.Booster(algorithm, n_rounds=1 + rounds, params=params).fit(X, y))
    return max(many - one, 0.0) / rounds, one


def naive_round(y, rng) -> float:
    """One round of the all-pairs update on an explicit n- x n+ matrix (pure numpy)."""
    neg, pos = np.flatnonzero(y < 0), np.flatnonzero(y > 0)
    D = np.full((neg.size, pos.size), 1.0 / (neg.size * pos.size))
    h = (rng.random(y.size) < 0.5).astype(float)
    start = time.perf_counter()
    r = np.sum(D * (h[pos][None, :] - h[neg][:, None]))
    alpha = 0.5 * np.log((1 + r) / (1 - r))
    D *= np.exp(alpha * (h[neg][:, None] - h[pos][None, :]))
    D /= D.sum()
    return time.perf_counter() - start


def median(values) -> float:
    return statistics.median(values)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000, help="examples of the large case")
    parser.add_argument("--d", type=int, default=20, help="features")
    parser.add_argument("--small", default="1000,2000,4000,8000", help="n of the small cases")
    parser.add_argument("--rounds", type=int, default=10, help="R, rounds timed per fit")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    numba.set_num_threads(1)
    rng = np.random.default_rng(1)

    # Warm the JIT of every kernel involved.
    Xw, yw = make_data(500, args.d)
    for algorithm in ("rankboost", "rankboost-pairs", "adaboost"):
        boostkit.Booster(algorithm, n_rounds=3).fit(Xw, yw)

    X, y = make_data(args.n, args.d)
    n_pairs = int((y > 0).sum()) * int((y < 0).sum())
    large: dict[str, list[tuple[float, float]]] = {"rankboost": [], "adaboost": []}
    for _ in range(args.repeats):
        for algorithm in large:
            large[algorithm].append(per_round(algorithm, X, y, args.rounds))

    small_sizes = [int(v) for v in args.small.split(",")]
    small: dict[int, dict[str, list[float]]] = {}
    for n in small_sizes:
        Xs, ys = make_data(n, args.d, seed=n)
        times = {"rankboost": [], "rankboost-pairs": [], "naive all-pairs": []}
        for _ in range(args.repeats):
            for algorithm in ("rankboost", "rankboost-pairs"):
                times[algorithm].append(per_round(algorithm, Xs, ys, args.rounds)[0])
            times["naive all-pairs"].append(naive_round(ys, rng))
        small[n] = times

    bipartite_round = median(t for t, _ in large["rankboost"])
    adaboost_round = median(t for t, _ in large["adaboost"])
    print(f"large: n = {args.n:,} x {args.d} features, {n_pairs:.3g} (negative, positive) pairs, "
          f"1 thread, median of {args.repeats}")
    print(f"  {'algorithm':<12} {'ms/round':>10} {'1-round fit s':>14} {'ratio':>7}")
    for algorithm, values in large.items():
        round_ms = median(t for t, _ in values) * 1e3
        fit_s = median(f for _, f in values)
        print(f"  {algorithm:<12} {round_ms:>10.2f} {fit_s:>14.3f} "
              f"{median(t for t, _ in values) / bipartite_round:>7.2f}")
    print(f"  rankboost / adaboost per round: {bipartite_round / adaboost_round:.2f}")

    print("\nsmall: per-round ms, ratio to bipartite rankboost at the same n")
    print(f"  {'n':>6} {'pairs':>10} {'rankboost':>10} {'rb-pairs':>10} {'ratio':>7} "
          f"{'naive':>10} {'ratio':>7} {'naive ns/pair':>14}")
    per_pair = []
    for n, times in small.items():
        _, ys = make_data(n, args.d, seed=n)
        pairs = int((ys > 0).sum()) * int((ys < 0).sum())
        base = median(times["rankboost"])
        explicit = median(times["rankboost-pairs"])
        naive = median(times["naive all-pairs"])
        per_pair.append(naive / pairs)
        print(f"  {n:>6} {pairs:>10.3g} {base * 1e3:>10.3f} {explicit * 1e3:>10.3f} "
              f"{explicit / base:>7.1f} {naive * 1e3:>10.3f} {naive / base:>7.1f} "
              f"{naive / pairs * 1e9:>14.2f}")
    extrapolated = median(per_pair) * n_pairs
    print(f"\nnaive all-pairs at n = {args.n:,}: {n_pairs:.3g} pairs x {median(per_pair) * 1e9:.2f} "
          f"ns = {extrapolated:,.0f} s per round (and {n_pairs * 8 / 2**30:,.0f} GiB for D), "
          f"{extrapolated / bipartite_round:,.0f} x the bipartite round")


if __name__ == "__main__":
    main()
