"""Fit time of boostkit's ``adaboost`` against scikit-learn's SAMME and LightGBM, in one run.

Every library is timed in this process, interleaved, after warming numba's JIT, with thread
counts pinned; the table reports medians over ``--repeats`` and ratios, since the machines are
shared and an absolute time alone says little.

* per-round time: boostkit and LightGBM are fitted with T and T/10 rounds and the difference is
  divided by 0.9 T, so binning / Dataset construction is not counted per round (the full fit
  time is shown too). scikit-learn has no separate setup and is timed on ``--sklearn-rounds``
  rounds (it takes ~0.4 s per round at 100 000 x 20).
* accuracy: on a held-out 20 %; scikit-learn is compared with boostkit's staged prediction after
  the same number of rounds, so the accuracy comparison is at equal rounds.
* threads: each library's per-round time on 1 thread over its time on the others ("speed-up").
* ``--busy``: another process spins on one core for the whole measurement (what a machine
  shared with other work looks like); run once with and once without to compare.
* ``--clock cpu`` (one thread only): times are the process's CPU time instead of the wall
  clock, so the time another process holds the core is not counted: steadier one-thread
  ratios on a shared machine. Threads' wall time needs the default ``--clock wall``.

Run:  python benchmarks/bench_adaboost.py            (four sizes, ~10 minutes)
      python benchmarks/bench_adaboost.py --busy     (the same, one core kept busy)
      python benchmarks/bench_adaboost.py --sizes 20000x20 --rounds 50 --repeats 1   (smoke)
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import boostkit  # noqa: E402


def parse_sizes(text: str) -> list[tuple[int, int]]:
    out = []
    for item in text.split(","):
        n, d = item.lower().split("x")
        out.append((int(float(n)), int(d)))
    return out


def make_data(n: int, d: int, seed: int = 0):
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=n + n // 4, n_features=d, n_informative=max(2, d // 2), n_redundant=d // 4,
        flip_y=0.05, random_state=seed,
    )
    return X[:n], y[:n], X[n:], y[n:]


#: The clock of every time: ``time.perf_counter`` (wall) or ``time.process_time`` (``--clock cpu``).
CLOCK = time.perf_counter


#: Pause before each timed fit: OpenMP threads of the fit before (LightGBM's, numba's) spin for
#: about 10 ms after it (measured: 9-10 ms of CPU after a two-thread LightGBM fit), taking a
#: core from whatever is timed next.
SETTLE = 0.05


def timed(fn):
    time.sleep(SETTLE)
    start = CLOCK()
    result = fn()
    return CLOCK() - start, result


def fit_boostkit(X, y, rounds, n_jobs):
    return boostkit.Booster("adaboost", n_rounds=rounds, n_jobs=n_jobs).fit(X, y)


def fit_lightgbm(X, y, rounds, n_jobs):
    import lightgbm as lgb

    params = {
        "objective": "binary", "num_leaves": 2, "max_bin": 255, "num_threads": n_jobs,
        "verbose": -1, "deterministic": True, "force_col_wise": True,
    }
    return lgb.train(params, lgb.Dataset(X, label=y), num_boost_round=rounds)


def fit_sklearn(X, y, rounds):
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier

    return AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=rounds,
                              random_state=0).fit(X, y)


def _spin(parent: int):
    while os.getppid() == parent:  # ends with the benchmark, even if it is killed
        for _ in range(1_000_000):
            pass


@contextlib.contextmanager
def busy_core(enabled: bool):
    """Keep one core busy in another process while the block runs (when ``enabled``)."""
    if not enabled:
        yield
        return
    spinner = multiprocessing.get_context("spawn").Process(target=_spin, args=(os.getpid(),),
                                                           daemon=True)
    spinner.start()
    try:
        time.sleep(0.5)  # let it start spinning
        yield
    finally:
        spinner.terminate()
        spinner.join()


def accuracy(pred, y):
    return float(np.mean(pred == y))


def bench_size(n, d, rounds, sk_rounds, repeats, jobs_list):
    X, y, Xt, yt = make_data(n, d)
    few = max(1, rounds // 10)
    rows = []
    times: dict[str, list[float]] = {}
    fulls: dict[str, list[float]] = {}
    acc: dict[str, float] = {}
    models = {}
    for _ in range(repeats):
        for n_jobs in jobs_list:
            for lib, fit in (("boostkit", fit_boostkit), ("lightgbm", fit_lightgbm)):
                key = f"{lib} ({n_jobs} thr)"
                t_full, models[key] = timed(lambda: fit(X, y, rounds, n_jobs))
                t_few, _ = timed(lambda: fit(X, y, few, n_jobs))
                times.setdefault(key, []).append((t_full - t_few) / (rounds - few))
                fulls.setdefault(key, []).append(t_full)
    # Accuracy once every fit is timed: a prediction between timed fits leaves OpenMP threads
    # spinning (LightGBM's, on every core by default), which took a core from the next fits.
    for key, model in models.items():
        if key.startswith("boostkit"):
            acc[key] = accuracy(model.predict(Xt), yt)
            for t, pred in enumerate(model.staged_predict(Xt), start=1):
                if t == sk_rounds:
                    acc["boostkit@sk"] = accuracy(pred, yt)
                    break
        else:
            acc[key] = accuracy((model.predict(Xt) > 0.5).astype(int), yt)
    if sk_rounds > 0:
        t_sk, model = timed(lambda: fit_sklearn(X, y, sk_rounds))
        times["scikit-learn (1 thr)"] = [t_sk / sk_rounds]
        fulls["scikit-learn (1 thr)"] = [t_sk * rounds / sk_rounds]
        acc["scikit-learn (1 thr)"] = accuracy(model.predict(Xt), yt)
    medians = {key: statistics.median(values) for key, values in times.items()}
    for key, per_round in medians.items():
        lib, threads = key.split(" (")
        # Against boostkit on the same number of threads; speed-up: over the library's 1 thread.
        base = medians.get(f"boostkit ({threads}", medians["boostkit (1 thr)"])
        speedup = medians[f"{lib} (1 thr)"] / per_round
        rows.append((f"{n}x{d}", key, per_round * 1e3, statistics.median(fulls[key]),
                     per_round / base, speedup, acc.get(key, float("nan"))))
    return rows, acc, medians


def summary_rows(n, d, medians, jobs_list, busy):
    """Markdown rows: per thread count, boostkit's time per round and the peers' over it."""
    out = []
    sk = medians.get("scikit-learn (1 thr)")
    for n_jobs in jobs_list:
        bk = medians[f"boostkit ({n_jobs} thr)"]
        lgb = medians[f"lightgbm ({n_jobs} thr)"]
        speedup = medians["boostkit (1 thr)"] / bk
        out.append(
            f"| {f'{n:_}'.replace('_', ' ')} x {d} | {n_jobs}{' (busy)' if busy else ''} | {bk * 1e3:.3f} ms | "
            f"{lgb * 1e3:.3f} ms | {lgb / bk:.2f}x | "
            f"{f'{sk / bk:.0f}x' if sk else '-'} | {speedup:.2f}x |"
        )
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000x10,20000x20,100000x100,1000000x20")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--sklearn-rounds", type=int, default=None,
                        help="rounds to time scikit-learn on (default: 10, 2 at >= 10^6 rows; 0 skips)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", default="1,2", help="thread counts for boostkit and LightGBM")
    parser.add_argument("--busy", action="store_true",
                        help="keep one core spinning in another process while measuring")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall time, or the process's CPU time (one thread only)")
    args = parser.parse_args(argv)
    jobs_list = [int(j) for j in args.jobs.split(",")]
    if args.clock == "cpu":
        if jobs_list != [1]:
            parser.error(f"--clock cpu measures one thread (--jobs 1), got --jobs {args.jobs}")
        global CLOCK
        CLOCK = time.process_time

    # Warm numba's JIT (and the on-disk cache) before timing anything.
    Xw, yw, _, _ = make_data(2000, 10)
    for n_jobs in jobs_list:
        fit_boostkit(Xw, yw, 3, n_jobs)

    print(f"rounds={args.rounds}, repeats={args.repeats} (medians), "
          f"numba threads available={boostkit.engine.numba.config.NUMBA_NUM_THREADS}, "
          f"cores={os.cpu_count()}, busy core: {'yes' if args.busy else 'no'}, "
          f"clock: {args.clock}")
    header = (f"{'size':>12} {'library':>22} {'ms/round':>9} {'fit s':>8} {'x boostkit':>10} "
              f"{'speed-up':>8} {'test acc':>8}")
    summary = []
    for n, d in parse_sizes(args.sizes):
        sk_rounds = args.sklearn_rounds
        if sk_rounds is None:
            sk_rounds = 2 if n >= 1_000_000 else 10
        with busy_core(args.busy):
            rows, acc, medians = bench_size(n, d, args.rounds, sk_rounds, args.repeats, jobs_list)
        summary += summary_rows(n, d, medians, jobs_list, args.busy)
        print()
        print(header)
        for size, key, ms, fit_s, ratio, speedup, a in rows:
            print(f"{size:>12} {key:>22} {ms:9.3f} {fit_s:8.2f} {ratio:10.2f} {speedup:8.2f} "
                  f"{a:8.4f}")
        if "scikit-learn (1 thr)" in acc:
            print(f"{'':>12} accuracy after {sk_rounds} rounds: boostkit {acc['boostkit@sk']:.4f}, "
                  f"scikit-learn {acc['scikit-learn (1 thr)']:.4f} "
                  f"(difference {100 * (acc['boostkit@sk'] - acc['scikit-learn (1 thr)']):+.2f} points)")

    print()
    print("| size | threads | boostkit per round | LightGBM per round | LightGBM / boostkit | "
          "scikit-learn / boostkit | boostkit speed-up over 1 thread |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
