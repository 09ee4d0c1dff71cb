"""What Ada2Boost's PN-space records cost: ``ada2boost`` against its peers, in one run.

Peers, fitted in this process, interleaved, after warming numba's JIT, one thread each:

* ``real-adaboost`` (boostkit_adaboost): stumps minimising Z with per-cell values, the same
  model family without the records;
* ``ada2boost`` with the ``exponential`` reweighting: the same weights, no PN-space records.

Reported: median fit time over ``--repeats`` and the ratio to ``real-adaboost``; and the AOC*
kernel against ``boostkit.metrics.roc_auc`` (which gives AOC* as (1 - AUC) P N).

Run:  python benchmarks/bench_pnspace.py                        (spambase, adult if available)
      python benchmarks/bench_pnspace.py --datasets spambase --repeats 1 --rounds 20   (smoke)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import attrs  # noqa: E402
import numpy as np  # noqa: E402

import boostkit  # noqa: E402
from boostkit import datasets  # noqa: E402
from boostkit.metrics import roc_auc  # noqa: E402
from boostkit_pnspace.kernels import aoc_star  # noqa: E402
from boostkit_pnspace.study import load_binary  # noqa: E402
from timing import median_time  # noqa: E402


def peers() -> dict[str, object]:
    ada2 = boostkit.get_registry().algorithm("ada2boost")
    return {
        "real-adaboost": "real-adaboost",
        "ada2boost (exponential)": attrs.evolve(ada2, reweighting=boostkit.ComponentSpec("exponential")),
        "ada2boost": "ada2boost",
    }


def bench_fits(name: str, rounds: int, repeats: int) -> None:
    X, y, _ = load_binary(name)
    algorithms = peers()
    times: dict[str, list[float]] = {key: [] for key in algorithms}
    for _ in range(repeats):  # interleaved, so load changes hit every peer alike
        for key, algorithm in algorithms.items():
            booster = boostkit.Booster(algorithm, n_rounds=rounds, n_jobs=1)
            start = time.perf_counter()
            booster.fit(X, y)
            times[key].append(time.perf_counter() - start)
    base = statistics.median(times["real-adaboost"])
    print(f"\n{name} ({X.shape[0]} x {X.shape[1]}), {rounds} rounds")
    print(f"{'algorithm':>26} {'fit s':>8} {'x real-adaboost':>16}")
    for key, values in times.items():
        t = statistics.median(values)
        print(f"{key:>26} {t:8.3f} {t / base:16.2f}")


def bench_aoc(n: int, repeats: int) -> None:
    rng = np.random.default_rng(0)
    scores = np.round(rng.normal(size=n), 2)  # ties, as ensembles of stumps give
    is_pos = (rng.random(n) < 0.4).astype(np.uint8)
    weights = rng.random(n)
    y = np.where(is_pos == 1, 1, -1)
    area = weights[is_pos == 1].sum() * weights[is_pos == 0].sum()
    kernel = median_time(lambda: aoc_star(scores, is_pos, weights, np.argsort(scores)), repeats)
    metric = median_time(lambda: (1 - roc_auc(y, scores, sample_weight=weights)) * area, repeats)
    print(f"\nAOC* of {n} scores: kernel + argsort {kernel * 1e3:.2f} ms, roc_auc {metric * 1e3:.2f} ms "
          f"(x{metric / kernel:.1f})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=None, help="comma-separated (default spambase, adult)")
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    names = args.datasets.split(",") if args.datasets else [
        n for n in ("spambase", "adult") if n in datasets.available()]

    X, y, _ = load_binary("ionosphere")  # warm numba's JIT and its on-disk cache
    for algorithm in peers().values():
        boostkit.Booster(algorithm, n_rounds=3).fit(X, y)
    aoc_star(np.zeros(2), np.array([0, 1], np.uint8), np.ones(2), np.arange(2))

    for name in names:
        bench_fits(name, args.rounds, args.repeats)
    bench_aoc(100_000, args.repeats)


if __name__ == "__main__":
    main()
