"""Test accuracy of ``adaboost``, ``real-adaboost`` and ``adaboost-mh`` on the bundled and KEEL
datasets, recorded per version of boostkit so that two versions can be compared.

Each (recipe, dataset) is fitted on the ten stratified folds a ``boostkit study --folds 10``
(seed 0) would use: the folds (:meth:`boostkit.study.Resampling.split`), the fit's
``random_state`` (:meth:`boostkit.study.Cell.random_state`) and the input form of a proposal
without categories or missing values (:class:`boostkit.study.compare.InputForm`) are the
study's; the fit is ``Booster(recipe, n_rounds, max_bins=255, multiclass="auto", n_jobs=1)``,
so a binary recipe meets a multiclass dataset one-vs-rest. Each test fold is predicted with
``predict``'s rule (:func:`boostkit.model.margin_labels`); no observer nor callback is given,
so a fit takes whichever round path the version runs by default.

The CSV (``benchmarks/results/accuracy_<label>.csv``) has one row per (recipe, dataset): the
mean test accuracy over the folds, each fold's accuracy and a short hash of its predicted
labels (two versions that predict a fold alike have the same hash), the mean rounds run, the
fits' CPU time, how the fits ran their rounds (``batch``: one compiled call; else one by one,
and why; a version without compiled batches leaves it empty); ``accuracy_<label>.json``
says which boostkit ran and how long the run took. ``--predictions FILE.npz`` also keeps every
fold's margins (not small: kept out of the results folder), from which ``--compare`` counts
the test rows predicted alike and the largest change of a margin.

Run:  python benchmarks/bench_accuracy.py --label after                       (every dataset)
      python benchmarks/bench_accuracy.py --label smoke --datasets keel/iris,ionosphere \\
          --recipes adaboost --rounds 20
      python benchmarks/bench_accuracy.py --label after-carried --booster histogram=carried
      python benchmarks/bench_accuracy.py --compare benchmarks/results/accuracy_before.csv \\
          benchmarks/results/accuracy_after.csv [--predictions before.npz after.npz]

A run resumes: the (recipe, dataset) rows already in the CSV (same settings) are kept and not
fitted again (``--fresh`` starts over). ``--n-jobs 2`` fits two (recipe, dataset) pairs at a
time in worker processes, each with one thread. Every dataset and recipe (126 pairs, 1 260
fits) took 440 s of wall time with ``--n-jobs 2`` on a shared 2-core machine at commit 1543654
(the fits' CPU time 267 s; ``keel/letter`` the longest pair, about 20 s of CPU).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse  # noqa: E402
import ast  # noqa: E402
import csv  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from concurrent.futures import ProcessPoolExecutor, as_completed  # noqa: E402
from datetime import datetime, timezone  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
RECIPES = ("adaboost", "real-adaboost", "adaboost-mh")
DATASETS = ("bundled", "keel")
#: The columns of the CSV, in order; ``fold_accuracies`` and ``fold_hashes`` hold one value a
#: fold, separated by spaces.
COLUMNS = ("recipe", "dataset", "n_rows", "n_classes", "status", "mean_accuracy",
           "fold_accuracies", "fold_hashes", "mean_rounds", "fit_cpu_seconds", "rounds",
           "folds", "round_paths", "error")
#: A fold's accuracy counts as changed beyond this (a test fold has at most a few thousand
#: rows, so one row moves it by far more).
EQUAL = 1e-12


def labels_hash(predicted: np.ndarray) -> str:
    """The first 12 hex digits of the sha256 of a fold's predicted class positions."""
    data = np.ascontiguousarray(predicted, dtype="<i8").tobytes()
    return hashlib.sha256(data).hexdigest()[:12]


_loaded: dict = {}
#: How this process's fits ran their rounds since the last reset: ``"batch"`` (one compiled
#: call, :func:`boostkit.compiled.batch_plan`) or why one by one; empty where the version has
#: no batches.
_round_paths: Counter = Counter()


def _count_round_paths() -> None:
    """Wrap the engine's ``batch_plan`` (once per process) to count which path each fit's
    rounds take; a version without compiled batches is left as it is."""
    from boostkit import engine

    original = getattr(engine, "batch_plan", None)
    if original is None or getattr(original, "counted", False):
        return

    def counted(*args, **kwargs):
        plan, why = original(*args, **kwargs)
        _round_paths["batch" if plan is not None else f"one by one: {why}"] += 1
        return plan, why

    counted.counted = True
    engine.batch_plan = counted


def _data(source):
    """A worker's last dataset, read once for all the recipes it fits on it."""
    if source.name not in _loaded:
        _loaded.clear()
        _loaded[source.name] = source.load()
    return _loaded[source.name]


def run_pair(source, recipe_text: str, n_rounds: int, folds: int,
             booster_options: dict) -> tuple[dict, dict]:
    """One recipe on one dataset over the study's folds: the CSV row, and each fold's test
    rows and margins (``{"test": [...], "scores": [...]}``; empty when the recipe cannot run).
    ``booster_options``: more keyword arguments of every fit's ``Booster``."""
    from boostkit.engine import Booster
    from boostkit.errors import DataError, RecipeError
    from boostkit.metrics import accuracy
    from boostkit.model import margin_labels
    from boostkit.plugins import get_registry
    from boostkit.study import Cell, Resampling
    from boostkit.study.compare import InputForm, rounds_run

    data = _data(source)
    _count_round_paths()
    _round_paths.clear()
    resampling = Resampling("k-fold", folds)
    row = {"recipe": recipe_text, "dataset": source.name, "n_rows": int(data.y.shape[0]),
           "n_classes": len(data.classes), "rounds": n_rounds, "folds": folds, "error": ""}
    kept = {"test": [], "scores": []}
    accuracies, hashes, rounds, fit_cpu = [], [], [], 0.0
    try:
        recipe = get_registry().resolve(recipe_text)
        form = InputForm.of(recipe, data)
        splits = resampling.split(data.y, data.name, data.data_hash, 0, 0)
        for fold, (train, test) in enumerate(splits):
            cell = Cell(data.name, recipe_text, resampling.name, 0, fold, 0)
            X, features = form.apply(data.X, data.features, train)
            booster = Booster(recipe, n_rounds=n_rounds, max_bins=255, multiclass="auto",
                              random_state=cell.random_state(data.data_hash), n_jobs=1,
                              **booster_options)
            started = time.process_time()
            model = booster.fit(X[train], data.y[train], features=features)
            fit_cpu += time.process_time() - started
            classes = np.asarray(model.classes)
            scores = model.decision_function(X[test])
            predicted = margin_labels(scores, np.arange(classes.shape[0]))
            y_test = np.searchsorted(classes, data.y[test])
            accuracies.append(accuracy(y_test, predicted))
            hashes.append(labels_hash(predicted))
            rounds.append(rounds_run(model))
            kept["test"].append(np.asarray(test))
            kept["scores"].append(np.asarray(scores, np.float64))
        row.update(status="done", mean_accuracy=repr(float(np.mean(accuracies))),
                   fold_accuracies=" ".join(repr(float(a)) for a in accuracies),
                   fold_hashes=" ".join(hashes), mean_rounds=float(np.mean(rounds)),
                   fit_cpu_seconds=round(fit_cpu, 3),
                   round_paths="; ".join(f"{why} x{n}" for why, n in _round_paths.most_common()))
    except (DataError, RecipeError) as exc:  # the recipe refuses these data: an outcome
        row.update(status="cannot run", error=f"{type(exc).__name__}: {exc}")
        kept = {"test": [], "scores": []}
    return row, kept


def _read_rows(path: Path) -> list[dict]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _version_note(commit: str | None) -> dict:
    import boostkit
    import numba

    return {"boostkit": str(Path(boostkit.__file__).resolve().parent), "commit": commit,
            "numba": numba.__version__, "numpy": np.__version__,
            "python": platform.python_version(), "cores": os.cpu_count()}


def _cost(source) -> int:
    """Rough size of a dataset's fits, so the largest start first."""
    entry = getattr(source, "entry", {}) or {}
    classes = entry.get("n_classes") or len(entry.get("class_counts", ())) or 2
    return int(entry.get("rows", 0)) * int(entry.get("n_features", 1)) * max(int(classes), 2)


def run(args) -> int:
    from boostkit.study.sources import resolve_datasets

    names = [name.strip() for name in args.datasets.split(",") if name.strip()]
    recipes = [name.strip() for name in args.recipes.split(",") if name.strip()]
    sources = resolve_datasets(names, data_dir=args.data_dir)
    out = Path(args.output) / f"accuracy_{args.label}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    done: dict[tuple[str, str], dict] = {}
    if out.exists() and not args.fresh:
        for row in _read_rows(out):
            if (int(row["rounds"]), int(row["folds"])) == (args.rounds, args.folds):
                done[(row["recipe"], row["dataset"])] = row
    kept: dict[str, np.ndarray] = {}
    if args.predictions and Path(args.predictions).exists() and not args.fresh:
        with np.load(args.predictions) as stored:
            kept = {key: stored[key] for key in stored.files}
    tasks = [(source, recipe) for source in sorted(sources, key=_cost, reverse=True)
             for recipe in recipes if (recipe, source.name) not in done]
    print(f"{len(tasks)} (recipe, dataset) pairs to fit, {len(done)} found in {out}; "
          f"{args.folds} folds, {args.rounds} rounds, {args.n_jobs} process(es)", flush=True)
    started_wall = time.perf_counter()
    saved = [started_wall]

    def write(final: bool = False) -> None:
        order = {(r, s.name): i for i, (s, r) in enumerate(
            (s, r) for s in sources for r in recipes)}
        rows = sorted(done.values(), key=lambda r: order.get((r["recipe"], r["dataset"]), 1e9))
        with out.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
        # the margins are large: saved every two minutes and at the end, not after each pair
        if args.predictions and (final or time.perf_counter() - saved[0] > 120):
            np.savez_compressed(args.predictions, **kept)
            saved[0] = time.perf_counter()

    def finished(row: dict, folds_kept: dict) -> None:
        done[(row["recipe"], row["dataset"])] = row
        for fold, (test, scores) in enumerate(zip(folds_kept["test"], folds_kept["scores"])):
            key = f"{row['recipe']}|{row['dataset']}|{fold}"
            kept[key + "|test"], kept[key + "|scores"] = test, scores
        print(f"  {row['recipe']:>14} {row['dataset']:<28} {row['status']:<10} "
              f"accuracy {row.get('mean_accuracy', '')[:8]:<8} fit CPU "
              f"{row.get('fit_cpu_seconds', '')} s  ({time.perf_counter() - started_wall:.0f} s)",
              flush=True)
        write()

    if args.n_jobs == 1:
        for source, recipe in tasks:
            finished(*run_pair(source, recipe, args.rounds, args.folds, args.booster))
    else:
        with ProcessPoolExecutor(args.n_jobs) as pool:
            futures = [pool.submit(run_pair, source, recipe, args.rounds, args.folds,
                                   args.booster)
                       for source, recipe in tasks]
            for future in as_completed(futures):
                finished(*future.result())
    write(final=True)
    wall = time.perf_counter() - started_wall
    note_path = out.with_suffix(".json")
    note = json.loads(note_path.read_text()) if note_path.exists() and not args.fresh else {}
    note.update(_version_note(args.commit))
    note.setdefault("runs", []).append({
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "pairs_fitted": len(tasks), "wall_seconds": round(wall, 1), "n_jobs": args.n_jobs,
        "datasets": names, "recipes": recipes, "rounds": args.rounds, "folds": args.folds,
        "booster_options": args.booster,
        "load_average_after": os.getloadavg()})
    note_path.write_text(json.dumps(note, indent=1) + "\n")
    cpu = sum(float(r["fit_cpu_seconds"] or 0) for r in done.values())
    print(f"wrote {out} ({len(done)} rows): {wall:.0f} s wall for {len(tasks)} pairs; the fits' "
          f"CPU time over all rows {cpu:.0f} s")
    return 0


def _row_agreement(before: Path, after: Path) -> dict[str, tuple[int, int, float]]:
    """Per recipe: test rows predicted alike, test rows, largest change of a margin relative
    to its fold's largest margin magnitude (the folds present in both files)."""
    from boostkit.model import margin_labels

    found: dict[str, list] = {}
    with np.load(before) as old, np.load(after) as new:
        for key in old.files:
            if not key.endswith("|scores") or key not in new.files:
                continue
            recipe = key.split("|")[0]
            a, b = old[key], new[key]
            alike = found.setdefault(recipe, [0, 0, 0.0])
            if a.shape != b.shape:
                alike[1] += a.shape[0]
                continue
            positions = np.arange(2 if a.ndim == 1 else a.shape[1])
            alike[0] += int(np.sum(margin_labels(a, positions) == margin_labels(b, positions)))
            alike[1] += a.shape[0]
            scale = float(np.max(np.abs(a))) or 1.0
            alike[2] = max(alike[2], float(np.max(np.abs(a - b))) / scale)
    return {recipe: tuple(values) for recipe, values in found.items()}


def _round_paths_total(rows) -> Counter:
    """The ``round_paths`` of ``rows`` summed."""
    total: Counter = Counter()
    for row in rows:
        for part in filter(None, (row.get("round_paths") or "").split("; ")):
            why, _, count = part.rpartition(" x")
            total[why] += int(count)
    return total


def compare(before: Path, after: Path, predictions: list[str] | None, top: int) -> int:
    """Per recipe: datasets with accuracy equal, higher, lower after; the largest changes; the
    mean change; folds predicted alike (hashes); with ``predictions``, rows alike too."""
    old = {(r["recipe"], r["dataset"]): r for r in _read_rows(before)}
    new = {(r["recipe"], r["dataset"]): r for r in _read_rows(after)}
    agreement = _row_agreement(*map(Path, predictions)) if predictions else {}
    print(f"before: {before}\nafter:  {after}\n")
    recipes = list(dict.fromkeys(recipe for recipe, _ in list(old) + list(new)))
    for recipe in recipes:
        keys = [k for k in old if k[0] == recipe and k in new]
        both = [k for k in keys if old[k]["status"] == new[k]["status"] == "done"]
        status_changed = [k for k in keys if old[k]["status"] != new[k]["status"]]
        missing = sorted({k[1] for k in [*old, *new] if k[0] == recipe} - {k[1] for k in keys})
        diffs = {k[1]: float(new[k]["mean_accuracy"]) - float(old[k]["mean_accuracy"])
                 for k in both}
        equal = sum(abs(d) <= EQUAL for d in diffs.values())
        higher = sum(d > EQUAL for d in diffs.values())
        lower = sum(d < -EQUAL for d in diffs.values())
        folds_alike = folds = datasets_alike = 0
        for k in both:
            pairs = list(zip(old[k]["fold_hashes"].split(), new[k]["fold_hashes"].split()))
            same = sum(a == b for a, b in pairs)
            folds_alike, folds = folds_alike + same, folds + len(pairs)
            datasets_alike += same == len(pairs)
        mean = float(np.mean(list(diffs.values()))) if diffs else float("nan")
        print(f"## {recipe}: {len(both)} datasets, mean accuracy "
              f"{np.mean([float(old[k]['mean_accuracy']) for k in both] or [np.nan]):.4f} "
              f"before, {np.mean([float(new[k]['mean_accuracy']) for k in both] or [np.nan]):.4f}"
              " after")
        print(f"  accuracy after vs before: equal {equal}, higher {higher}, lower {lower}; "
              f"mean difference {mean:+.5f}")
        print(f"  folds predicted alike: {folds_alike}/{folds}; datasets with every fold "
              f"alike: {datasets_alike}/{len(both)}")
        for label, rows in (("before", old), ("after", new)):
            paths = _round_paths_total(rows[k] for k in both)
            if paths:
                print(f"  fits' round paths {label}: " + "; ".join(
                    f"{why} x{n}" for why, n in paths.most_common()))
        if recipe in agreement:
            alike, rows, margin = agreement[recipe]
            print(f"  test rows predicted alike: {alike}/{rows} ({alike / max(rows, 1):.4%}); "
                  f"largest margin change {margin:.3g} of its fold's largest margin")
        moved = sorted(((d, name) for name, d in diffs.items() if abs(d) > EQUAL),
                       key=lambda item: -abs(item[0]))[:top]
        if moved:
            print("  largest differences: " + ", ".join(
                f"{name} {d:+.5f} ({float(old[(recipe, name)]['mean_accuracy']):.4f} -> "
                f"{float(new[(recipe, name)]['mean_accuracy']):.4f})" for d, name in moved))
        for k in status_changed:
            print(f"  {k[1]}: {old[k]['status']} before, {new[k]['status']} after "
                  f"{(new[k]['error'] or old[k]['error'])[:120]}")
        if missing:
            print(f"  in one file only: {', '.join(missing)}")
        print()
    return 0


def _booster_option(parser, text: str) -> tuple[str, object]:
    name, equals, value = text.partition("=")
    if not equals or not name.strip():
        parser.error(f"--booster: expected NAME=VALUE, got {text!r}")
    try:
        return name.strip(), ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return name.strip(), value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", help="names the output: accuracy_<label>.csv")
    parser.add_argument("--datasets", default=",".join(DATASETS),
                        help="comma-separated suites and datasets, as boostkit study's "
                             "(default: bundled,keel)")
    parser.add_argument("--recipes", default=",".join(RECIPES))
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--data-dir", default=None, help="as boostkit study's --data-dir")
    parser.add_argument("--output", default=str(RESULTS), help="folder of the CSV")
    parser.add_argument("--commit", default=None,
                        help="the commit of boostkit that runs, recorded in the JSON note")
    parser.add_argument("--predictions", nargs="+", default=None, metavar="NPZ",
                        help="a run: one .npz to keep the margins in; --compare: two")
    parser.add_argument("--booster", action="append", default=[], metavar="NAME=VALUE",
                        help="a keyword argument of every fit's Booster, e.g. "
                             "histogram=carried or compiled_rounds=False (a Python literal, "
                             "else text); repeatable")
    parser.add_argument("--fresh", action="store_true", help="ignore an existing CSV")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE_CSV", "AFTER_CSV"))
    parser.add_argument("--top", type=int, default=5, help="--compare: differences listed")
    args = parser.parse_args(argv)
    if args.compare:
        if args.predictions is not None and len(args.predictions) != 2:
            parser.error(f"--predictions with --compare: expected two files, got "
                         f"{len(args.predictions)}")
        return compare(Path(args.compare[0]), Path(args.compare[1]), args.predictions,
                       args.top)
    if not args.label:
        parser.error("--label is required to run (or give --compare BEFORE AFTER)")
    if args.predictions is not None:
        if len(args.predictions) != 1:
            parser.error(f"--predictions with a run: expected one file, got "
                         f"{len(args.predictions)}")
        args.predictions = args.predictions[0]
    args.booster = dict(_booster_option(parser, text) for text in args.booster)
    if args.n_jobs < 1:
        parser.error(f"--n-jobs: expected an integer >= 1, got {args.n_jobs}")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
