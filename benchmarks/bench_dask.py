"""Distributed fits on a Dask LocalCluster against one process and against lightgbm.dask.

The data (``--rows`` x ``--features``, default 10 000 000 x 20, ``--partitions`` row
partitions) are generated on the workers, partition by partition, from a seed: they never pass
through this process. Measured in one run, every fit with one thread per worker:

* per-round time of ``adaboost`` (stumps) on ``--workers`` workers (default 2): the median gap
  between consecutive rounds, seen by a callback on the driver, so setup (bin sample, binning,
  shard building) is left out;
* the same recipe in one process on the same rows (materialised here, for the comparison only);
* ``lightgbm.dask.DaskLGBMClassifier`` with 2-leaf trees on the same Dask arrays (persisted, as
  LightGBM requires): (time of ``--rounds`` + 10 rounds - time of 10 rounds) / ``--rounds``,
  the median of ``--repeats`` such differences (its setup, seconds, would drown a round);
* bytes moved per round (``fit_stats_``: terms out, histograms back), and where a round's
  time goes (``fit_stats_``: the driver's wait for the shards, the shards' own work, the round
  trips, the driver's own work);
* the driver's peak traced memory (tracemalloc) during a distributed fit at a tenth of the rows
  and at all of them: it must not grow with the number of rows;
* a tree recipe (``--tree-recipe``, default ``weightboost``: depth-2 entropy trees, grown on
  the shards level by level, one reduction per level below the root): its per-round time on
  the workers and in one process on the same rows, and its bytes per round (``--tree-rounds``
  rounds; ``--skip-tree`` leaves it out);
* a PAV recipe (``--pav-recipe``, default ``pav-adaboost-finite``: each column a score, PAV over
  its bins from the summed histogram, every term back-fitted after the first cycle, the shards
  keeping the raw values for the columns' orientation): its per-round time on the workers and in
  one process on the same rows, its bytes per round and its accuracy (``--pav-rounds`` rounds,
  default two cycles; ``--skip-pav`` leaves it out).

Run:  python benchmarks/bench_dask.py                          (~5 minutes, ~6 GB of memory)
      python benchmarks/bench_dask.py --rows 1000000 --rounds 15   (smoke)
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402
from distributed import Client, LocalCluster, wait  # noqa: E402

import boostkit  # noqa: E402
import boostkit.dask  # noqa: E402


def partition(k: int, rows: int, d: int, seed: int):
    """Rows of partition ``k``: Gaussian features, a label that needs several features."""
    rng = np.random.default_rng([seed, k])
    X = rng.standard_normal((rows, d))
    score = X[:, 0] + 0.5 * X[:, 1] * X[:, 2] - 0.7 * X[:, 3] + 0.5 * rng.standard_normal(rows)
    return X, (score > 0).astype(np.int64)


def dask_data(n: int, d: int, n_parts: int, seed: int):
    sizes = [n // n_parts + (k < n % n_parts) for k in range(n_parts)]
    parts = [dask.delayed(partition, nout=2, pure=True)(k, rows, d, seed)
             for k, rows in enumerate(sizes)]
    X = da.concatenate([da.from_delayed(p[0], shape=(rows, d), dtype=np.float64)
                        for p, rows in zip(parts, sizes)])
    y = da.concatenate([da.from_delayed(p[1], shape=(rows,), dtype=np.int64)
                        for p, rows in zip(parts, sizes)])
    return X, y, sizes


class RoundClock:
    """A callback that timestamps every round on the driver."""

    def __init__(self):
        self.stamps = []

    def __call__(self, state, record):
        self.stamps.append(time.perf_counter())

    def per_round(self) -> float:
        gaps = np.diff(self.stamps)
        return statistics.median(gaps[1:]) if gaps.size > 1 else float("nan")

    def mean_round(self) -> float:
        gaps = np.diff(self.stamps)
        return float(gaps.mean()) if gaps.size else float("nan")


def distributed_fit(client, X, y, rounds, recipe="adaboost"):
    clock = RoundClock()
    booster = boostkit.dask.Booster(recipe, n_rounds=rounds, callbacks=[clock])
    start = time.perf_counter()
    model = booster.fit(X, y, client=client)
    return (model, clock.per_round(), time.perf_counter() - start,
            (booster.fit_stats_, clock.mean_round()))


def where_the_time_goes(timed, workers: int) -> str:
    """A round's time split (means over the fit's rounds, ms): the driver's wait for the
    shards' answers (wall), the shards' own work (CPU, summed over the shards, and per worker if
    the workers share it evenly), the rest of the wait (Dask's round trips: scheduling,
    transfer, serialisation; and any wait for a free core), and the driver's own work (the
    round's time but the wait: proposal, calibration, reducing the histograms, records).
    ``timed``: the fit's stats and its mean round, as :func:`distributed_fit` gives them."""
    stats, mean_round = timed
    rounds = max(stats.rounds, 1)
    wait = stats.step_seconds / rounds
    work = stats.shard_seconds / rounds
    return (f"a round, {mean_round * 1e3:.1f} ms (mean): the driver waits "
            f"{wait * 1e3:.1f} ms for the shards, whose own work is {work * 1e3:.1f} ms of CPU "
            f"summed over the shards, {work / workers * 1e3:.1f} ms per worker if shared evenly; "
            f"the rest of the wait (round trips, a wait for a core) {(wait - work / workers) * 1e3:.1f}"
            f" ms; the driver's own work {(mean_round - wait) * 1e3:.1f} ms")


def driver_peak(client, X, y) -> float:
    """Peak traced memory of this process during a 3-round distributed fit, in MB."""
    tracemalloc.start()
    boostkit.dask.Booster("adaboost", n_rounds=3).fit(X, y, client=client)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1e6


def lightgbm_per_round(client, X, y, rounds, repeats) -> float:
    import lightgbm as lgb

    X, y = client.persist([X, y])
    wait([X, y])

    def fit_time(n_estimators):
        model = lgb.DaskLGBMClassifier(n_estimators=n_estimators, num_leaves=2, max_depth=1,
                                       learning_rate=1.0, n_jobs=1, max_bin=255,
                                       min_child_samples=1, verbose=-1, client=client)
        start = time.perf_counter()
        model.fit(X, y)
        return time.perf_counter() - start

    return statistics.median((fit_time(rounds + 10) - fit_time(10)) / rounds
                             for _ in range(repeats))


def pav_on_workers(client, X, y, small_X, small_y, recipe, rounds):
    """The PAV recipe's distributed fit (after a short one that compiles the workers' kernels):
    ``(model, per round, whole fit, (fit stats, mean round))``."""
    distributed_fit(client, small_X, small_y, 3, recipe)
    return distributed_fit(client, X, y, rounds, recipe)


def report_pav(on_workers, X_local, y_local, X_test, y_test, recipe, rounds, workers) -> None:
    """The PAV recipe in one process on the same rows, against its fit on the workers."""
    model, dist_round, _, (stats, _) = on_workers
    boostkit.Booster(recipe, n_rounds=3).fit(X_local[:10_000], y_local[:10_000])
    clock = RoundClock()
    local = boostkit.Booster(recipe, n_rounds=rounds, callbacks=[clock]).fit(X_local, y_local)
    local_round = clock.per_round()
    same = sum(a == b for a, b in zip(local.hypotheses, model.hypotheses))
    accuracy = [float(np.mean(m.predict(X_test) == y_test)) for m in (model, local)]
    print()
    print(f"{recipe} (score columns, PAV from the cells' sums, back-fitted terms), "
          f"{rounds} rounds")
    print(f"{'fit':<42} {'per round':>12} {'ratio':>8}")
    print(f"{'boostkit.dask, ' + str(workers) + ' workers':<42} "
          f"{dist_round * 1e3:>9.1f} ms {1.0:>8.2f}")
    print(f"{'boostkit, one process':<42} {local_round * 1e3:>9.1f} ms "
          f"{local_round / dist_round:>8.2f}")
    print(f"bytes per round: {stats.bytes_per_round / 1e3:.1f} kB "
          f"({stats.bytes_out / max(stats.rounds, 1) / 1e3:.1f} kB out: terms, replaced terms and "
          f"reductions, {stats.bytes_in / max(stats.rounds, 1) / 1e3:.1f} kB back)")
    print(f"{same} of {len(model.hypotheses)} terms the same columns as one process; accuracy on "
          f"200 000 new rows {accuracy[0]:.4f} distributed, {accuracy[1]:.4f} one process")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--skip-lightgbm", action="store_true")
    parser.add_argument("--tree-recipe", default="weightboost")
    parser.add_argument("--tree-rounds", type=int, default=10)
    parser.add_argument("--skip-tree", action="store_true")
    parser.add_argument("--pav-recipe", default="pav-adaboost-finite")
    parser.add_argument("--pav-rounds", type=int, default=None, help="default: 2 x features")
    parser.add_argument("--skip-pav", action="store_true")
    args = parser.parse_args()
    n, d = args.rows, args.features
    pav_rounds = 2 * d if args.pav_rounds is None else args.pav_rounds

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, memory_limit=0) as cluster, Client(cluster) as client:
        client.run(lambda: os.environ.update(NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1"))
        X, y, _ = dask_data(n, d, args.partitions, args.seed)
        small_X, small_y, _ = dask_data(n // 10, d, args.partitions, args.seed)
        distributed_fit(client, small_X, small_y, 3)  # warm the JIT on the workers
        model, dist_round, dist_total, timed = distributed_fit(client, X, y, args.rounds)
        stats = timed[0]
        peak_small = driver_peak(client, small_X, small_y)
        peak_full = driver_peak(client, X, y)
        lgb_round = (float("nan") if args.skip_lightgbm
                     else lightgbm_per_round(client, X, y, args.rounds, args.repeats))
        if not args.skip_tree:
            distributed_fit(client, small_X, small_y, 3, args.tree_recipe)  # warm the JIT
            tree_model, tree_round, _, tree_timed = distributed_fit(client, X, y,
                                                                    args.tree_rounds,
                                                                    args.tree_recipe)
        if not args.skip_pav:
            pav = pav_on_workers(client, X, y, small_X, small_y, args.pav_recipe, pav_rounds)

    # One process, the same rows, materialised here for the comparison only.
    parts = [partition(k, rows, d, args.seed) for k, rows in
             enumerate([n // args.partitions + (k < n % args.partitions)
                        for k in range(args.partitions)])]
    X_local = np.concatenate([p[0] for p in parts])
    y_local = np.concatenate([p[1] for p in parts])
    del parts
    boostkit.Booster("adaboost", n_rounds=3).fit(X_local[:10_000], y_local[:10_000])
    clock = RoundClock()
    local = boostkit.Booster("adaboost", n_rounds=args.rounds, callbacks=[clock]).fit(
        X_local, y_local)
    local_round = clock.per_round()
    same = sum(a == b for a, b in zip(local.hypotheses, model.hypotheses))
    X_test, y_test = partition(args.partitions + 1, 200_000, d, args.seed)  # rows never fitted
    accuracy = {name: float(np.mean(m.predict(X_test) == y_test))
                for name, m in (("distributed", model), ("one process", local))}
    if not args.skip_tree:
        boostkit.Booster(args.tree_recipe, n_rounds=3).fit(X_local[:10_000], y_local[:10_000])
        clock = RoundClock()
        tree_local = boostkit.Booster(args.tree_recipe, n_rounds=args.tree_rounds,
                                      callbacks=[clock]).fit(X_local, y_local)
        tree_local_round = clock.per_round()
        tree_accuracy = [float(np.mean(m.predict(X_test) == y_test))
                         for m in (tree_model, tree_local)]

    print(f"adaboost (stumps), {n:,} x {d}, {args.partitions} partitions, {args.rounds} rounds, "
          f"1 thread per worker")
    print(f"{'fit':<42} {'per round':>12} {'ratio':>8}")
    print(f"{'boostkit.dask, ' + str(args.workers) + ' workers':<42} "
          f"{dist_round * 1e3:>9.1f} ms {1.0:>8.2f}")
    print(f"{'boostkit, one process':<42} {local_round * 1e3:>9.1f} ms "
          f"{local_round / dist_round:>8.2f}")
    print(f"{'lightgbm.dask, 2-leaf trees, ' + str(args.workers) + ' workers':<42} "
          f"{lgb_round * 1e3:>9.1f} ms {lgb_round / dist_round:>8.2f}")
    print("(ratio: the fit's time per round over boostkit.dask's; > 1: boostkit.dask is faster)")
    print(f"bytes per round: {stats.bytes_per_round / 1e3:.1f} kB "
          f"({stats.bytes_out / max(stats.rounds, 1):.0f} B of terms out, "
          f"{stats.bytes_in / max(stats.rounds, 1) / 1e3:.1f} kB of histograms back)")
    print(where_the_time_goes(timed, args.workers))
    print(f"driver peak memory: {peak_small:.1f} MB at {n // 10:,} rows, {peak_full:.1f} MB at "
          f"{n:,} rows")
    print(f"whole distributed fit: {dist_total:.1f} s (setup included)")
    print(f"against one process: {same} of {len(model.hypotheses)} terms identical (above "
          f"{boostkit.data.BIN_SAMPLE:,} rows the bin edges come from different row samples); "
          f"accuracy on 200 000 new rows {accuracy['distributed']:.4f} distributed, "
          f"{accuracy['one process']:.4f} one process")
    if not args.skip_pav:
        report_pav(pav, X_local, y_local, X_test, y_test, args.pav_recipe, pav_rounds,
                   args.workers)
    if args.skip_tree:
        return
    print()
    print(f"{args.tree_recipe} (depth-2 trees, one reduction per level below the root), "
          f"{args.tree_rounds} rounds")
    print(f"{'fit':<42} {'per round':>12} {'ratio':>8}")
    print(f"{'boostkit.dask, ' + str(args.workers) + ' workers':<42} "
          f"{tree_round * 1e3:>9.1f} ms {1.0:>8.2f}")
    print(f"{'boostkit, one process':<42} {tree_local_round * 1e3:>9.1f} ms "
          f"{tree_local_round / tree_round:>8.2f}")
    tree_stats = tree_timed[0]
    print(f"bytes per round: {tree_stats.bytes_per_round / 1e3:.1f} kB "
          f"({tree_stats.bytes_out / max(tree_stats.rounds, 1) / 1e3:.1f} kB out: terms and "
          f"reductions, {tree_stats.bytes_in / max(tree_stats.rounds, 1) / 1e3:.1f} kB back: "
          "histograms and the levels' sums)")
    print(where_the_time_goes(tree_timed, args.workers))
    print(f"accuracy on 200 000 new rows {tree_accuracy[0]:.4f} distributed, "
          f"{tree_accuracy[1]:.4f} one process")


if __name__ == "__main__":
    main()
