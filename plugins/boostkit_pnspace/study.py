"""Learning curves of AdaBoost vs Ada2Boost with 1..100 stumps (Scholz 2006, section 4, Fig. 6).

Run ``python -m boostkit_pnspace.study`` (``--help`` for the options). For every real binary
dataset boostkit can load offline (:func:`boostkit.datasets.available`; the paper used credit-g =
``german_credit``, ``adult``, mushrooms = ``mushroom`` and musk, and a KDD Cup 2004 sample that
is not available) it cross-validates (10 stratified folds by default) ``adaboost`` and
``ada2boost`` with up to 100 stumps and measures, on the held-out fold, accuracy (ACC), the area
under the ROC curve (AUC) and the root mean squared error of the probability estimates (RMSE;
p = 1/(1 + e^{-2F}) for both, which is beta_hat/(1 + beta_hat) for Ada2Boost and Weka's AdaBoostM1
output for AdaBoost). One fit of 100 rounds gives all 100 points by staged predictions; a fit
that stops early (``no-edge``, ``perfect-fit``) keeps its final ensemble for the larger sizes.

The AdaBoost runs use the ``stratification`` reweighting in place of ``exponential``: the
weights (and so the model) are the same, and the PN-space records come for free, so the training
curves (total weight W/|E|, training AUC, Corollary 1's bound, the reweighted AUC) are drawn for
both algorithms.

Data preparation: categorical columns are one-hot encoded and a missing category is the all-zero
pattern; rows with a missing numeric value are dropped (breast_cancer_wisconsin: 16); adult uses
its training part (32,561 rows, as the paper's "32K examples"); musk1 and musk2 are used per
instance, ignoring the bags. Outputs in ``--output``: ``summary.md`` (tables with paired t-tests
over folds, when scipy is installed), ``learning_curves.csv`` (mean and standard deviation over
folds for every ensemble size), ``curves.npz`` (every fold), ``fig6.png`` (all datasets, like
Fig. 6) and ``<dataset>.png`` (test and training curves).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path
from typing import Sequence

import attrs
import numpy as np

import boostkit
from boostkit import datasets
from boostkit.metrics import roc_auc, stratified_folds

__all__ = ["ALGORITHMS", "binary_datasets", "load_binary", "main", "run_study", "study_recipe"]

ALGORITHMS = ("adaboost", "ada2boost")
LABELS = {"adaboost": "AdaBoost", "ada2boost": "Ada²Boost"}
TEST_METRICS = ("accuracy", "auc", "rmse")
TRAIN_CURVES = ("weight_fraction", "train_auc", "auc_bound", "weighted_auc")
LOWER_IS_BETTER = {"rmse"}
TABLE_STUMPS = (1, 5, 10, 20, 50, 100)
PAPER_DATASETS = ("german_credit", "adult", "mushroom", "musk1", "musk2")


def load_binary(name: str) -> tuple[np.ndarray, np.ndarray, str]:
    """``(X, y, note)``: a dataset prepared as the study uses it (see the module docstring).

    ``y`` is +1 for the manifest's suggested positive class and -1 otherwise.
    """
    data = datasets.load(name, encode="onehot")
    X, y = data.X, data.binary_target()
    notes = []
    if data.split is not None and (data.split == "train").any():
        keep = data.split == "train"
        X, y = X[keep], y[keep]
        notes.append("training part only")
    onehot = np.array(["=" in feature for feature in data.feature_names])
    missing_category = np.isnan(X) & onehot
    if missing_category.any():
        X = np.where(missing_category, 0.0, X)
        notes.append(f"{int(missing_category.any(axis=1).sum())} rows with a missing category")
    complete = ~np.isnan(X).any(axis=1)
    if not complete.all():
        X, y = X[complete], y[complete]
        notes.append(f"{int((~complete).sum())} rows with a missing number dropped")
    return np.ascontiguousarray(X), y, "; ".join(notes)


def binary_datasets() -> list[str]:
    """The tabular two-class datasets among :func:`boostkit.datasets.available`."""
    names = []
    for name in datasets.available():
        try:
            data = datasets.load(name)
        except ValueError:  # a text dataset: load() refuses it
            continue
        if data.positive is not None and np.unique(data.y).size == 2:
            names.append(name)
    return names


def study_recipe(algorithm: str, smoothing: str = "none") -> boostkit.Recipe:
    """The recipe the study fits: the registered one, with the PN-space records for AdaBoost."""
    recipe = boostkit.get_registry().algorithm(algorithm)
    if algorithm == "adaboost":
        return attrs.evolve(recipe, reweighting=boostkit.ComponentSpec("stratification"))
    return recipe.with_params({"calibration": {"smoothing": smoothing}})


def _padded(values: list[float], n_rounds: int) -> np.ndarray:
    """A curve over 1..n_rounds stumps: a run that stopped early keeps its last ensemble."""
    out = np.empty(n_rounds)
    out[:len(values)] = values
    out[len(values):] = values[-1]
    return out


def _fold_curves(model: boostkit.BoostModel, X_test, y_test, n_train: int, n_rounds: int) -> dict:
    accuracy, auc, rmse = [], [], []
    positive = (y_test > 0).astype(np.float64)
    stages = zip(model.staged_decision_function(X_test), model.staged_predict_proba(X_test))
    for margin, proba in stages:
        accuracy.append(float(np.mean((margin > 0) == (y_test > 0))))
        auc.append(roc_auc(y_test, margin))
        rmse.append(float(np.sqrt(np.mean((proba[:, 1] - positive) ** 2))))
    records = model.records
    curves = {"accuracy": accuracy, "auc": auc, "rmse": rmse,
              "weight_fraction": [r.extra["total_weight"] / n_train for r in records],
              "train_auc": [r.extra["train_auc"] for r in records],
              "auc_bound": [r.extra["auc_bound"] for r in records],
              # None when a class lost all its weight (pure cells): the condition is void.
              "weighted_auc": [np.nan if r.extra["weighted_auc"] is None else r.extra["weighted_auc"]
                               for r in records]}
    return {key: _padded(values, n_rounds) for key, values in curves.items()}


def run_dataset(name: str, *, n_folds: int = 10, n_rounds: int = 100, seed: int = 0,
                n_jobs: int = 1, smoothing: str = "none", log=None) -> dict:
    """Cross-validate both algorithms on one dataset; every curve is ``(n_folds, n_rounds)``."""
    X, y, note = load_binary(name)
    folds = stratified_folds(y, n_folds, seed)
    result = {"dataset": name, "n_examples": int(X.shape[0]), "n_features": int(X.shape[1]),
              "n_positive": int((y > 0).sum()), "note": note, "curves": {}, "rounds": {},
              "stop_reasons": {}, "seconds": {}}
    for algorithm in ALGORITHMS:
        recipe = study_recipe(algorithm, smoothing)
        per_fold, rounds, stops = [], [], []
        started = time.perf_counter()
        for train, test in folds:
            model = boostkit.Booster(recipe, n_rounds=n_rounds, n_jobs=n_jobs,
                                     random_state=seed).fit(X[train], y[train])
            per_fold.append(_fold_curves(model, X[test], y[test], train.shape[0], n_rounds))
            rounds.append(model.n_rounds)
            stops.append(model.stop_reason)
        result["curves"][algorithm] = {
            key: np.stack([fold[key] for fold in per_fold]) for key in per_fold[0]
        }
        result["rounds"][algorithm] = rounds
        result["stop_reasons"][algorithm] = stops
        result["seconds"][algorithm] = time.perf_counter() - started
        if log is not None:
            mean = {k: result["curves"][algorithm][k][:, -1].mean() for k in TEST_METRICS}
            log(f"{name}: {algorithm} {n_folds} folds in {result['seconds'][algorithm]:.1f} s; "
                f"{n_rounds} stumps: ACC {mean['accuracy']:.4f}, AUC {mean['auc']:.4f}, "
                f"RMSE {mean['rmse']:.4f}")
    return result


def _paired_p_value(a: np.ndarray, b: np.ndarray) -> float | None:
    """Two-sided paired t-test over folds (scipy), 1.0 for identical results, None without scipy."""
    if np.array_equal(a, b):
        return 1.0
    try:
        from scipy.stats import ttest_rel
    except ImportError:
        return None
    p = float(ttest_rel(a, b).pvalue)
    return p if np.isfinite(p) else 1.0


def compare_at(result: dict, metric: str, stumps: int) -> dict:
    """Means, standard deviations, difference (Ada2Boost - AdaBoost) and p-value at a size."""
    ada = result["curves"]["adaboost"][metric][:, stumps - 1]
    ada2 = result["curves"]["ada2boost"][metric][:, stumps - 1]
    difference = float(ada2.mean() - ada.mean())
    better = -difference if metric in LOWER_IS_BETTER else difference
    return {"adaboost": (float(ada.mean()), float(ada.std())),
            "ada2boost": (float(ada2.mean()), float(ada2.std())),
            "difference": difference, "ada2boost_better": better > 0, "tie": difference == 0.0,
            "p_value": _paired_p_value(ada, ada2)}


def sizes_ahead(result: dict, metric: str) -> tuple[int, int]:
    """How many ensemble sizes Ada2Boost's mean is strictly better, and strictly worse, at."""
    ada = result["curves"]["adaboost"][metric].mean(axis=0)
    ada2 = result["curves"]["ada2boost"][metric].mean(axis=0)
    better = ada2 < ada if metric in LOWER_IS_BETTER else ada2 > ada
    worse = ada2 > ada if metric in LOWER_IS_BETTER else ada2 < ada
    return int(better.sum()), int(worse.sum())


def run_study(names: Sequence[str], *, n_folds: int = 10, n_rounds: int = 100, seed: int = 0,
              n_jobs: int = 1, smoothing: str = "none", log=None) -> list[dict]:
    """:func:`run_dataset` for every name, in order."""
    return [run_dataset(name, n_folds=n_folds, n_rounds=n_rounds, seed=seed, n_jobs=n_jobs,
                        smoothing=smoothing, log=log) for name in names]


# -- outputs ------------------------------------------------------------------------------------

def _format_p(p: float | None) -> str:
    return "n/a" if p is None else f"{p:.3g}"


def summary_markdown(results: list[dict], run: dict) -> str:
    """The study's tables: where Ada2Boost is ahead, then every metric at a few sizes."""
    sizes = [k for k in TABLE_STUMPS if k <= run["n_rounds"]]
    lines = [
        "# AdaBoost vs Ada²Boost: learning curves (Scholz 2006, section 4, Fig. 6)",
        "",
        f"{run['n_folds']}-fold stratified cross-validation (seed {run['seed']}), 1..{run['n_rounds']} "
        f"stumps, Ada²Boost smoothing `{run['smoothing']}`. Means over folds; ± is the standard "
        "deviation over folds; p is a two-sided paired t-test over folds. RMSE: lower is better.",
        "",
        "## Where Ada²Boost is ahead",
        "",
        "Ensemble sizes (of " + str(run["n_rounds"]) + ") at which Ada²Boost's mean is better / "
        "worse than AdaBoost's; then the difference (Ada²Boost − AdaBoost) at "
        + ", ".join(str(k) for k in sizes[-3:]) + " stumps, * for p < 0.02 (the paper's level).",
        "",
        "| dataset | n × d | metric | better / worse | "
        + " | ".join(f"Δ at {k}" for k in sizes[-3:]) + " |",
        "| --- | --- | --- | --- | " + " | ".join("---" for _ in sizes[-3:]) + " |",
    ]
    for result in results:
        for metric in TEST_METRICS:
            better, worse = sizes_ahead(result, metric)
            cells = []
            for k in sizes[-3:]:
                c = compare_at(result, metric, k)
                star = "*" if c["p_value"] is not None and c["p_value"] < 0.02 else ""
                cells.append(f"{c['difference']:+.4f}{star}")
            lines.append(f"| {result['dataset']} | {result['n_examples']} × {result['n_features']} "
                         f"| {metric} | {better} / {worse} | " + " | ".join(cells) + " |")
    lines += ["", "## Every dataset", ""]
    for result in results:
        lines += [f"### {result['dataset']}", "",
                  f"{result['n_examples']} examples ({result['n_positive']} positive), "
                  f"{result['n_features']} features" + (f"; {result['note']}" if result["note"] else "")
                  + ". Rounds fitted per fold: "
                  + "; ".join(f"{LABELS[a]} {min(r)}–{max(r)} ({', '.join(sorted(set(result['stop_reasons'][a])))})"
                              for a, r in result["rounds"].items()) + ".", "",
                  "| metric | stumps | AdaBoost | Ada²Boost | Δ | p |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for metric in TEST_METRICS:
            for k in sizes:
                c = compare_at(result, metric, k)
                lines.append(
                    f"| {metric} | {k} | {c['adaboost'][0]:.4f} ± {c['adaboost'][1]:.4f} | "
                    f"{c['ada2boost'][0]:.4f} ± {c['ada2boost'][1]:.4f} | {c['difference']:+.4f} | "
                    f"{_format_p(c['p_value'])} |")
        lines.append("")
    return "\n".join(lines)


def write_outputs(results: list[dict], run: dict, output: Path, plots: bool = True) -> list[Path]:
    """Write the tables, the curves and (with matplotlib) the plots; return the files."""
    output.mkdir(parents=True, exist_ok=True)
    written = [output / "summary.md", output / "learning_curves.csv", output / "curves.npz",
               output / "run.json"]
    written[0].write_text(summary_markdown(results, run), encoding="utf-8")
    keys = TEST_METRICS + TRAIN_CURVES
    with open(written[1], "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["dataset", "algorithm", "stumps"]
                        + [f"{k}_{s}" for k in keys for s in ("mean", "std")])
        for result in results:
            for algorithm, curves in result["curves"].items():
                for k in range(run["n_rounds"]):
                    row = [result["dataset"], algorithm, k + 1]
                    for key in keys:
                        column = curves[key][:, k]
                        row += [f"{np.nanmean(column):.6g}", f"{np.nanstd(column):.6g}"]
                    writer.writerow(row)
    np.savez_compressed(written[2], **{
        f"{result['dataset']}/{algorithm}/{key}": values
        for result in results for algorithm, curves in result["curves"].items()
        for key, values in curves.items()
    })
    meta = {**run, "datasets": [{k: v for k, v in r.items() if k != "curves"} for r in results]}
    written[3].write_text(json.dumps(meta, indent=2), encoding="utf-8")
    if plots:
        written += plot_study(results, run, output)
    return written


def plot_study(results: list[dict], run: dict, output: Path) -> list[Path]:
    """``fig6.png`` (test ACC, AUC, RMSE per dataset) and one ``<dataset>.png`` each."""
    from .plot import plot_dataset_curves, plot_fig6  # matplotlib: imported only to draw

    paths = [plot_fig6(results, output / "fig6.png")]
    paths += [plot_dataset_curves(result, output / f"{result['dataset']}.png") for result in results]
    return paths


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m boostkit_pnspace.study",
        description="Learning curves of AdaBoost vs Ada2Boost with 1..N stumps (Scholz 2006, Fig. 6).")
    parser.add_argument("--datasets", metavar="A,B",
                        help="comma-separated dataset names (default: every binary dataset "
                             "boostkit.datasets.available() lists)")
    parser.add_argument("--folds", type=int, default=10, help="cross-validation folds (default 10)")
    parser.add_argument("--rounds", type=int, default=100, help="largest ensemble (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the folds (default 0)")
    parser.add_argument("--n-jobs", type=int, default=1, help="threads per fit (default 1)")
    parser.add_argument("--smoothing", default="none", choices=("none", "laplace", "m-estimate"),
                        help="Ada2Boost's smoothing (default none, as in the paper)")
    parser.add_argument("--output", default="pnspace-study", help="output directory")
    parser.add_argument("--no-plots", action="store_true", help="write tables only")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.folds < 2 or args.rounds < 1:
        print("error: --folds must be >= 2 and --rounds >= 1", file=sys.stderr)
        return 2
    names = args.datasets.split(",") if args.datasets else binary_datasets()
    unknown = sorted(set(names) - set(datasets.available()))
    if unknown:
        print(f"error: unknown datasets {unknown}; available: {datasets.available()}", file=sys.stderr)
        return 2
    missing = [n for n in PAPER_DATASETS if n not in names]
    if missing and not args.datasets:
        print(f"note: the paper's datasets {missing} are not available: they load from a data "
              "directory (set BOOSTKIT_DATA, see boostkit.datasets.data_dir)", file=sys.stderr)
    run = {"n_folds": args.folds, "n_rounds": args.rounds, "seed": args.seed,
           "smoothing": args.smoothing, "names": names}

    def log(message):
        print(message, file=sys.stderr, flush=True)

    results = run_study(names, n_folds=args.folds, n_rounds=args.rounds, seed=args.seed,
                        n_jobs=args.n_jobs, smoothing=args.smoothing, log=log)
    for path in write_outputs(results, run, Path(args.output), plots=not args.no_plots):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
