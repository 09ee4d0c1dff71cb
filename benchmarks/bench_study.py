"""A study's overhead per cell against its fits' own time.

A cell's own time is its fit and its prediction of the test fold (``fit_seconds`` +
``predict_seconds``, timed inside the cell). Everything else a study does is its overhead:
folds, the input form, scoring, the learning curve and the model's size (on the first fold of
each repeat), the prediction hash, the database transaction, loading the data and enumerating
cells. It is measured as the study's wall time minus the cells' own time, serially in this
process with one thread, after a warm-up study on the first three datasets has compiled numba's
kernels; the ratio overhead / own time must stay at most 5 %. Each repeat writes a fresh
database; the median ratio over ``--repeats`` is printed (the machines are shared).

The default workload is the issue's study, the KEEL suite with 10 folds, here with two of its
algorithms (adaboost, real-adaboost). Fast fits on small data are the worst case: the overhead
per cell is about constant (a few milliseconds), so ``--suite bundled`` style runs of 30-60 ms
fits show a larger ratio than the suite, whose mean fit takes about a second.

Run:  python benchmarks/bench_study.py                  (KEEL, two algorithms, ~6 minutes)
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
from pathlib import Path  # noqa: E402

from boostkit.study import ResultStore, Resampling, StudySpec, run_study  # noqa: E402
from boostkit.study.sources import resolve_datasets  # noqa: E402

LIMIT = 0.05


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
            started = time.perf_counter()
            run = run_study(spec(Path(directory) / f"{repeat}.sqlite"), sources=sources)
            wall = time.perf_counter() - started
            with ResultStore(run.database, readonly=True) as store:
                frame = store.read_frame()
            own = float((frame["fit_seconds"].fillna(0) + frame["predict_seconds"].fillna(0))
                        .sum())
            ratios.append((wall - own) / own)
            print(f"repeat {repeat + 1}: {len(frame)} cells in {wall:.2f} s, fits' own time "
                  f"{own:.2f} s, overhead {(wall - own) / len(frame) * 1e3:.2f} ms per cell "
                  f"= {ratios[-1]:.1%} of the fits' own time", flush=True)
    ratio = statistics.median(ratios)
    verdict = "within" if ratio <= LIMIT else "OVER"
    print(f"study overhead / fits' own time: {ratio:.1%} (median of {len(ratios)}; {verdict} "
          f"the {LIMIT:.0%} limit)")
    return 0 if ratio <= LIMIT else 1


if __name__ == "__main__":
    raise SystemExit(main())
