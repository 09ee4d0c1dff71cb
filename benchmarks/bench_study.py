"""A study's overhead per cell against its fits' own time.

A cell's own time is its fit and its prediction of the test fold (``fit_seconds`` +
``predict_seconds``, timed inside the cell). Its overhead is the rest of the cell's wall time
(:func:`boostkit.study.runner.run_cell`): folds, the input form, scoring, the prediction hash,
and the two measurements every cell records, its learning curve and its model's size
(:mod:`boostkit.study.measure`). The ratio sum(overhead) / sum(own time) over the study's
cells must stay at most 5 %. The study's own work outside the cells (the database
transactions, loading the data, enumerating cells) is printed beside it, as the study's wall
time minus the cells'.

Runs serially in this process with one thread, after a warm-up study on the first three
datasets has loaded numba's kernels; each repeat writes a fresh database; the median ratio over
``--repeats`` is printed (the machines are shared).

The default workload is the issue's study, the KEEL suite with 10 folds, here with two of its
algorithms (adaboost, real-adaboost). Fast fits on small data are the worst case: the overhead
per cell is a few milliseconds, so ``--datasets`` of 10-60 ms fits show a larger ratio than
the suite, whose mean fit takes about a tenth of a second.

Run:  python benchmarks/bench_study.py                  (KEEL, two algorithms, ~4 minutes)
      python benchmarks/bench_study.py --datasets pima_diabetes,ionosphere,german_credit,breast_cancer_wisconsin,contraceptive --algorithms adaboost,real-adaboost,gentle-adaboost,logitboost --repeats 3
      python benchmarks/bench_study.py --datasets keel/iris,keel/wine --repeats 1  (smoke)
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from pathlib import Path  # noqa: E402

from boostkit.study import ResultStore, Resampling, StudySpec, run_study, runner  # noqa: E402
from boostkit.study.sources import resolve_datasets  # noqa: E402

LIMIT = 0.05
#: The functions of boostkit.study.runner whose wall time is summed: the cell, and the two
#: measurements inside it.
TIMED = ("run_cell", "learning_curve", "model_bytes")


@contextmanager
def timed(seconds: dict):
    """Add the wall time of every call of :data:`TIMED` to ``seconds[name]``."""
    originals = {name: getattr(runner, name) for name in TIMED}

    def timer(name, function):
        def call(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                seconds[name] += time.perf_counter() - started
        return call

    for name, function in originals.items():
        setattr(runner, name, timer(name, function))
    try:
        yield
    finally:
        for name, function in originals.items():
            setattr(runner, name, function)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="keel",
                        help="suites, datasets or CSV files (default: the KEEL suite)")
    parser.add_argument("--algorithms", default="adaboost,real-adaboost")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    sources = resolve_datasets(args.datasets.split(","))

    def spec(database, folds=args.folds):
        return StudySpec(datasets=args.datasets, algorithms=args.algorithms,
                         resampling=Resampling.of("k-fold", folds), n_rounds=args.rounds,
                         database=database)

    ratios = []
    with tempfile.TemporaryDirectory() as directory:
        run_study(spec(Path(directory) / "warm-up.sqlite", 2), sources=sources[:3])
        for repeat in range(args.repeats):
            seconds: dict[str, float] = defaultdict(float)
            with timed(seconds):
                started = time.perf_counter()
                run = run_study(spec(Path(directory) / f"{repeat}.sqlite"), sources=sources)
                wall = time.perf_counter() - started
            with ResultStore(run.database, readonly=True) as store:
                frame, curves = store.read_frame(), store.read_curves()
            own = float((frame["fit_seconds"].fillna(0) + frame["predict_seconds"].fillna(0))
                        .sum())
            n_cells, done = len(frame), frame["status"] == "done"
            overhead = seconds["run_cell"] - own
            ratios.append(overhead / own)
            other = overhead - seconds["learning_curve"] - seconds["model_bytes"]
            print(f"repeat {repeat + 1}: {n_cells} cells ({int(done.sum())} done, "
                  f"{len(curves)} curve rows, {int(frame['model_bytes'].notna().sum())} model "
                  f"sizes), fits' own time {own:.2f} s; overhead in the cells "
                  f"{overhead / n_cells * 1e3:.2f} ms per cell = {ratios[-1]:.1%} of the fits' "
                  f"own time: learning curves {seconds['learning_curve'] / own:.1%}, model "
                  f"sizes {seconds['model_bytes'] / own:.1%}, the rest {other / own:.1%}; "
                  f"outside the cells (database, data, cells' enumeration) "
                  f"{(wall - seconds['run_cell']) / n_cells * 1e3:.2f} ms per cell = "
                  f"{(wall - seconds['run_cell']) / own:.1%}", flush=True)
    ratio = statistics.median(ratios)
    verdict = "within" if ratio <= LIMIT else "OVER"
    print(f"cells' overhead / fits' own time: {ratio:.1%} (median of {len(ratios)}; {verdict} "
          f"the {LIMIT:.0%} limit)")
    return 0 if ratio <= LIMIT else 1


if __name__ == "__main__":
    raise SystemExit(main())
