"""Fit time of boostkit's recipes against scikit-learn's SAMME and LightGBM, in one run.

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
* ``--recipes``: the boostkit recipes timed (default ``adaboost``), each the same way, in the
  same run; each recipe's round is shown over ``adaboost``'s (when it is among them) and
  LightGBM's round over each recipe's. A recipe that stops early is timed on the rounds it ran.
* ``--classes K`` (K > 2): K-class data, the recipes (default ``adaboost-mh``) against
  LightGBM's ``objective="multiclass"`` with ``num_class=K`` and 2 leaves (one 2-leaf tree per
  class and round), the same bins, threads and deterministic settings.
* ``--min-seconds``: a size whose fits are short gets more repeats than ``--repeats`` (a fit
  of a few milliseconds varies by about one round's time): about that many seconds of full fits
  per library, at most :data:`MAX_REPEATS`; each size says how many it took.
* the end: the targets of issue 35 for the sizes and recipes that were run, with the measured
  ratio and whether each is met (:data:`TARGETS`).

Run:  python benchmarks/bench_adaboost.py            (four sizes, ~10 minutes)
      python benchmarks/bench_adaboost.py --busy     (the same, one core kept busy)
      python benchmarks/bench_adaboost.py --sizes 20000x20 --rounds 50 --repeats 1   (smoke)
      python benchmarks/bench_adaboost.py --jobs 1 --clock cpu --sizes 20000x20,100000x100 \
          --recipes adaboost,real-adaboost,gentle-adaboost,logitboost,multinomial-logitboost
      python benchmarks/bench_adaboost.py --jobs 1 --clock cpu --classes 10 --sizes 100000x20
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import multiprocessing
import os
import math
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


def make_data(n: int, d: int, seed: int = 0, classes: int = 2):
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=n + n // 4, n_features=d, n_informative=max(2, d // 2), n_redundant=d // 4,
        flip_y=0.05, random_state=seed, n_classes=classes,
    )
    return X[:n], y[:n], X[n:], y[n:]


#: The clock of every time: ``time.perf_counter`` (wall) or ``time.process_time`` (``--clock cpu``).
CLOCK = time.perf_counter


#: Pause before each timed fit: OpenMP threads of the fit before (LightGBM's, numba's) spin for
#: about 10 ms after it (measured: 9-10 ms of CPU after a two-thread LightGBM fit), taking a
#: core from whatever is timed next.
SETTLE = 0.05

#: The most repeats ``--min-seconds`` gives a size.
MAX_REPEATS = 60


def timed(fn):
    time.sleep(SETTLE)
    start = CLOCK()
    result = fn()
    return CLOCK() - start, result


def fit_boostkit(X, y, rounds, n_jobs, recipe="adaboost"):
    return boostkit.Booster(recipe, n_rounds=rounds, n_jobs=n_jobs).fit(X, y)


def fit_lightgbm(X, y, rounds, n_jobs, classes=2):
    import lightgbm as lgb

    params = {
        "objective": "binary", "num_leaves": 2, "max_bin": 255, "num_threads": n_jobs,
        "verbose": -1, "deterministic": True, "force_col_wise": True,
    }
    if classes > 2:  # one 2-leaf tree per class and round
        params.update(objective="multiclass", num_class=classes)
    return lgb.train(params, lgb.Dataset(X, label=y), num_boost_round=rounds)


def rounds_fitted(model) -> int:
    """The rounds a fit ran: boostkit's records (a recipe may stop early), LightGBM's
    iterations."""
    records = getattr(model, "records", None)
    return len(records) if records is not None else model.current_iteration()


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


def bench_size(n, d, rounds, sk_rounds, repeats, jobs_list, recipes, classes=2, min_seconds=0.0):
    """Per-round medians of every recipe and LightGBM (keys ``"<recipe> (<k> thr)"``,
    ``"lightgbm (<k> thr)"``, ``"scikit-learn (1 thr)"``): T and T/10 rounds, interleaved."""
    X, y, Xt, yt = make_data(n, d, classes=classes)
    few = max(1, rounds // 10)
    rows = []
    times: dict[str, list[float]] = {}
    fulls: dict[str, list[float]] = {}
    acc: dict[str, float] = {}
    models = {}
    fits = [(recipe, lambda r, j, recipe=recipe: fit_boostkit(X, y, r, j, recipe))
            for recipe in recipes]
    fits.append(("lightgbm", lambda r, j: fit_lightgbm(X, y, r, j, classes)))
    # Two fits of every library on this size's data first, not counted: numba's specialisations
    # for its shapes and paths (a carried histogram's small-n helper, say), the libraries'
    # imports and the caches warm, so the first size of a run is not timed colder than the
    # others. The second's time sets the repeats: a fit of a few milliseconds varies by about
    # its own round time, so small sizes get more repeats, up to ``min_seconds`` of fits per
    # library (at most MAX_REPEATS).
    slowest = 0.0
    for n_jobs in jobs_list:
        for _, fit in fits:
            fit(few, n_jobs)
            slowest = max(slowest, timed(lambda: fit(few, n_jobs))[0] * rounds / few)
    repeats = max(repeats, min(MAX_REPEATS, math.ceil(min_seconds / max(slowest, 1e-9))))
    for _ in range(repeats):
        for n_jobs in jobs_list:
            for lib, fit in fits:
                key = f"{lib} ({n_jobs} thr)"
                t_full, models[key] = timed(lambda: fit(rounds, n_jobs))
                t_few, model_few = timed(lambda: fit(few, n_jobs))
                ran = rounds_fitted(models[key]) - rounds_fitted(model_few)
                times.setdefault(key, []).append((t_full - t_few) / max(ran, 1))
                fulls.setdefault(key, []).append(t_full)
    # Accuracy once every fit is timed: a prediction between timed fits leaves OpenMP threads
    # spinning (LightGBM's, on every core by default), which took a core from the next fits.
    first = f"{recipes[0]} (1 thr)"
    for key, model in models.items():
        if key.startswith("lightgbm"):
            pred = model.predict(Xt)
            pred = pred.argmax(axis=1) if pred.ndim == 2 else (pred > 0.5).astype(int)
            acc[key] = accuracy(pred, yt)
            continue
        acc[key] = accuracy(model.predict(Xt), yt)
        if key == first:
            for t, pred in enumerate(model.staged_predict(Xt), start=1):
                if t == sk_rounds:
                    acc["boostkit@sk"] = accuracy(pred, yt)
                    break
    if sk_rounds > 0:
        t_sk, model = timed(lambda: fit_sklearn(X, y, sk_rounds))
        times["scikit-learn (1 thr)"] = [t_sk / sk_rounds]
        fulls["scikit-learn (1 thr)"] = [t_sk * rounds / sk_rounds]
        acc["scikit-learn (1 thr)"] = accuracy(model.predict(Xt), yt)
    medians = {key: statistics.median(values) for key, values in times.items()}
    for key, per_round in medians.items():
        lib, threads = key.split(" (")
        # Against the first recipe on the same number of threads; speed-up: over the library's
        # 1 thread.
        base = medians.get(f"{recipes[0]} ({threads}", medians[first])
        speedup = medians[f"{lib} (1 thr)"] / per_round
        rows.append((f"{n}x{d}", key, per_round * 1e3, statistics.median(fulls[key]),
                     per_round / base, speedup, acc.get(key, float("nan"))))
    return rows, acc, medians, repeats


def _size(n, d, classes=2) -> str:
    return f"{n:,}".replace(",", " ") + f" x {d}" + (f" x {classes} classes" if classes > 2 else "")


def summary_rows(n, d, medians, jobs_list, busy, recipes, classes=2):
    """Markdown rows: per recipe and thread count, its time per round, LightGBM's, and the
    ratios (LightGBM's over the recipe's; the recipe's over adaboost's when it was run)."""
    out = []
    sk = medians.get("scikit-learn (1 thr)")
    for recipe in recipes:
        for n_jobs in jobs_list:
            bk = medians[f"{recipe} ({n_jobs} thr)"]
            lgb = medians[f"lightgbm ({n_jobs} thr)"]
            ada = medians.get(f"adaboost ({n_jobs} thr)")
            speedup = medians[f"{recipe} (1 thr)"] / bk
            out.append(
                f"| {_size(n, d, classes)} | {recipe} | {n_jobs}{' (busy)' if busy else ''} | "
                f"{bk * 1e3:.3f} ms | {lgb * 1e3:.3f} ms | {lgb / bk:.2f}x | "
                f"{f'{bk / ada:.2f}x' if ada else '-'} | "
                f"{f'{sk / bk:.0f}x' if sk and recipe == recipes[0] else '-'} | {speedup:.2f}x |"
            )
    return out


@dataclasses.dataclass(frozen=True)
class Target:
    """One of issue 35's per-round targets: ``ratio(medians)`` against ``bound``."""

    what: str
    size: tuple[int, int, int] | None  # (n, d, classes), or None: every size run
    numerator: str  # the slower library's key (its time over the other's is the ratio)
    denominator: str
    at_least: float | None = None
    at_most: float | None = None

    def check(self, medians) -> tuple[float, bool] | None:
        """``(ratio, met)`` from one size's 1-thread medians, or ``None`` if not run there."""
        top, bottom = (medians.get(f"{key} (1 thr)") for key in (self.numerator,
                                                                 self.denominator))
        if top is None or bottom is None:
            return None
        ratio = top / bottom
        return ratio, (ratio >= self.at_least if self.at_least is not None
                       else ratio <= self.at_most)


#: Issue 35's targets (one thread, per round): LightGBM's round over boostkit's at least the
#: bound, or a recipe's round over adaboost's at most it.
TARGETS = (
    Target("adaboost >= 3x LightGBM", (1000, 10, 2), "lightgbm", "adaboost", at_least=3.0),
    Target("adaboost >= 4x LightGBM", (1_000_000, 20, 2), "lightgbm", "adaboost", at_least=4.0),
    Target("adaboost >= 4x LightGBM", (100_000, 100, 2), "lightgbm", "adaboost", at_least=4.0),
    Target("real-adaboost <= 1.2x adaboost", None, "real-adaboost", "adaboost", at_most=1.2),
    Target("gentle-adaboost <= 1.2x adaboost", None, "gentle-adaboost", "adaboost",
           at_most=1.2),
    Target("logitboost <= 1.5x adaboost", None, "logitboost", "adaboost", at_most=1.5),
    Target("multinomial-logitboost <= 1.5x adaboost", None, "multinomial-logitboost",
           "adaboost", at_most=1.5),
    Target("adaboost-mh >= 3x LightGBM multiclass", (100_000, 20, 10), "lightgbm",
           "adaboost-mh", at_least=3.0),
)


def target_rows(results) -> list[str]:
    """Markdown rows of :data:`TARGETS` met or not, for every ``((n, d, classes), medians)``
    in ``results`` where the target's libraries were run (one thread)."""
    out = []
    for target in TARGETS:
        for size, medians in results:
            if target.size is not None and target.size != size:
                continue
            found = target.check(medians)
            if found is None:
                continue
            ratio, met = found
            wanted = (f">= {target.at_least:g}x" if target.at_least is not None
                      else f"<= {target.at_most:g}x")
            out.append(f"| {target.what} | {_size(*size)} | "
                       f"{target.numerator} / {target.denominator} = {ratio:.2f}x | {wanted} | "
                       f"{'met' if met else 'not met'} |")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000x10,20000x20,100000x100,1000000x20")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--sklearn-rounds", type=int, default=None,
                        help="rounds to time scikit-learn on (default: 10, 2 at >= 10^6 rows; 0 skips)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--min-seconds", type=float, default=1.0,
                        help="more repeats at sizes whose fits are short: about this many "
                             f"seconds of full fits per library and size (at most {MAX_REPEATS} "
                             "repeats)")
    parser.add_argument("--jobs", default="1,2", help="thread counts for boostkit and LightGBM")
    parser.add_argument("--recipes", default=None,
                        help="comma-separated boostkit recipes (default: adaboost; adaboost-mh "
                             "with --classes)")
    parser.add_argument("--classes", type=int, default=2,
                        help="classes of the synthetic data (> 2: LightGBM's multiclass "
                             "objective, num_class of them)")
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
    if args.classes < 2:
        parser.error(f"--classes must be at least 2, got {args.classes}")
    recipes = (args.recipes or ("adaboost-mh" if args.classes > 2 else "adaboost")).split(",")
    registered = set(boostkit.get_registry().algorithms())
    unknown = [r for r in recipes if r not in registered]
    if unknown:
        parser.error(f"--recipes: unknown recipe(s) {', '.join(unknown)}; expected among "
                     f"{', '.join(sorted(registered))}")

    # Warm numba's JIT (and the on-disk cache) before timing anything.
    Xw, yw, _, _ = make_data(2000, 10, classes=args.classes)
    for n_jobs in jobs_list:
        for recipe in recipes:
            fit_boostkit(Xw, yw, 3, n_jobs, recipe)

    print(f"rounds={args.rounds}, repeats={args.repeats} (medians), "
          f"numba threads available={boostkit.engine.numba.config.NUMBA_NUM_THREADS}, "
          f"cores={os.cpu_count()}, busy core: {'yes' if args.busy else 'no'}, "
          f"clock: {args.clock}, classes: {args.classes}, recipes: {', '.join(recipes)}")
    header = (f"{'size':>12} {'library':>32} {'ms/round':>9} {'fit s':>8} "
              f"{'x ' + recipes[0]:>14} {'speed-up':>8} {'test acc':>8}")
    summary = []
    results = []
    for n, d in parse_sizes(args.sizes):
        sk_rounds = args.sklearn_rounds
        if sk_rounds is None:
            sk_rounds = 2 if n >= 1_000_000 else 10
        with busy_core(args.busy):
            rows, acc, medians, repeats = bench_size(n, d, args.rounds, sk_rounds, args.repeats,
                                                     jobs_list, recipes, args.classes,
                                                     args.min_seconds)
        summary += summary_rows(n, d, medians, jobs_list, args.busy, recipes, args.classes)
        results.append(((n, d, args.classes), medians))
        print()
        print(f"{_size(n, d, args.classes)}: medians of {repeats} repeats")
        print(header)
        for size, key, ms, fit_s, ratio, speedup, a in rows:
            print(f"{size:>12} {key:>32} {ms:9.3f} {fit_s:8.2f} {ratio:14.2f} {speedup:8.2f} "
                  f"{a:8.4f}")
        noisy = [key for key, value in medians.items() if value <= 0.0]
        if noisy:  # T rounds timed faster than T/10: the rounds are below the setup's noise
            print(f"{'':>12} {', '.join(noisy)}: the T - T/10 rounds took less than the noise of "
                  "the fits' setup (more --rounds or --repeats, or --clock cpu)")
        if "scikit-learn (1 thr)" in acc:
            print(f"{'':>12} accuracy after {sk_rounds} rounds: {recipes[0]} "
                  f"{acc['boostkit@sk']:.4f}, scikit-learn {acc['scikit-learn (1 thr)']:.4f} "
                  f"(difference {100 * (acc['boostkit@sk'] - acc['scikit-learn (1 thr)']):+.2f} "
                  "points)")

    print()
    print("| size | recipe | threads | boostkit per round | LightGBM per round | "
          "LightGBM / boostkit | recipe / adaboost | scikit-learn / boostkit | "
          "boostkit speed-up over 1 thread |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(summary))
    targets = target_rows(results) if 1 in jobs_list else []
    print()
    if targets:
        print("Issue 35's targets (one thread, per round, this run):")
        print()
        print("| target | size | measured | wanted | |")
        print("| --- | --- | --- | --- | --- |")
        print("\n".join(targets))
    else:
        print("Issue 35's targets: none of their sizes and recipes was run on one thread.")


if __name__ == "__main__":
    main()
