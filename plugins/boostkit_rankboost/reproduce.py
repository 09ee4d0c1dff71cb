"""Reproduce the examples of Yoder 2011 (*AdaBoost and RankBoost*).

``python -m boostkit_rankboost.reproduce slides``
    The two scored tables of "Discrete classifiers" (5 and 11 items): their ROC and
    precision-recall points, AUC and average precision; and the pair distributions D of the
    slide "Example" (rank(x1) < rank(x2) < rank(x3), and rank(x1) < rank(x2) = rank(x3)).
``python -m boostkit_rankboost.reproduce bound [--dataset ionosphere] [--rounds 100]``
    RankBoost's training ranking loss against prod_t Z_t round by round ("as before,
    err_train <= prod Z_t").
``python -m boostkit_rankboost.reproduce figures [--output docs/algorithms/img]``
    The ROC and precision-recall curves of the two tables as PNG files (``slides-roc.png``,
    ``slides-pr.png``; needs the ``plot`` extra).
``python -m boostkit_rankboost.reproduce datasets [--rounds 100] [--folds 5]``
    Cross-validated AUC and average precision of rankboost, rankboost-features and adaboost on
    the bundled datasets ("does not attempt to directly maximize MAP, but is successful at doing
    this anyhow").

The slides contain no table of results beyond these examples; ``bound`` and ``datasets`` are
checks of their claims on real data.
"""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

import boostkit
from boostkit.metrics import (
    average_precision,
    precision_recall_curve,
    ranking_loss,
    roc_auc,
    roc_curve,
    stratified_folds,
)

from .preferences import preference_pairs

# Yoder 2011, "Discrete classifiers": ground truth (GT) and feature scores, highest first.
SLIDE_TABLES = {
    "five items": (np.array([1, 0, 1, 0, 1]), np.array([0.9, 0.7, 0.6, 0.5, 0.2])),
    "eleven items": (
        np.array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]),
        np.array([0.9, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.5, 0.5, 0.5, 0.2]),
    ),
}
# Yoder 2011, "Example": true ranks of x1, x2, x3 (larger = ranked higher).
SLIDE_RANKINGS = {
    "e.g. 1: rank(x1) < rank(x2) < rank(x3)": np.array([0, 1, 2]),
    "e.g. 2: rank(x1) < rank(x2) = rank(x3)": np.array([0, 1, 1]),
}
DATASETS = ("ionosphere", "breast_cancer_wisconsin", "german_credit", "pima_diabetes", "spambase")
ALGORITHMS = ("rankboost", "rankboost-features", "adaboost")


def _fractions(values) -> list[Fraction]:
    return [Fraction(float(v)).limit_denominator(1000) for v in values]


def slide_curves() -> dict[str, dict]:
    """ROC and precision-recall points (exact fractions), AUC and AP of the slides' tables."""
    out = {}
    for name, (gt, feat) in SLIDE_TABLES.items():
        fpr, tpr, thresholds = roc_curve(gt, feat)
        precision, recall, _ = precision_recall_curve(gt, feat)
        out[name] = {
            "thresholds": thresholds.tolist(),
            "roc": list(zip(_fractions(fpr), _fractions(tpr))),
            "pr": list(zip(_fractions(recall), _fractions(precision))),
            "auc": roc_auc(gt, feat),
            "average_precision": average_precision(gt, feat),
        }
    return out


def slide_pair_distributions() -> dict[str, np.ndarray]:
    """D[x0, x1] for the slides' two example rankings, built by :func:`preference_pairs`."""
    out = {}
    for name, ranks in SLIDE_RANKINGS.items():
        lower, upper, weight = preference_pairs(ranks)
        matrix = np.zeros((ranks.shape[0], ranks.shape[0]))
        matrix[lower, upper] = weight
        out[name] = matrix
    return out


def bound_trace(dataset: str = "ionosphere", n_rounds: int = 100):
    """Per round t: (training ranking loss of F_t, prod_{s<=t} Z_s) of ``rankboost``."""
    data = boostkit.datasets.load(dataset, encode="onehot", dropna=True)
    y = data.binary_target()
    model = boostkit.Booster("rankboost", n_rounds=n_rounds).fit(data.X, y)
    losses = [ranking_loss(y, margin) for margin in model.staged_decision_function(data.X)]
    return model, np.array(losses), np.array([r.error_bound for r in model.records])


def cross_validated_ranking(datasets=DATASETS, algorithms=ALGORITHMS, n_rounds: int = 100,
                            n_folds: int = 5, seed: int = 0) -> dict[tuple[str, str], tuple]:
    """{(dataset, algorithm): (mean AUC, mean AP)} over seeded stratified folds."""
    out = {}
    for name in datasets:
        data = boostkit.datasets.load(name, encode="onehot", dropna=True)
        y = data.binary_target()
        folds = stratified_folds(y, n_folds, seed)
        for algorithm in algorithms:
            aucs, aps = [], []
            for train, test in folds:
                model = boostkit.Booster(algorithm, n_rounds=n_rounds, random_state=seed).fit(
                    data.X[train], y[train])
                scores = model.decision_function(data.X[test])
                aucs.append(roc_auc(y[test], scores))
                aps.append(average_precision(y[test], scores))
            out[name, algorithm] = (float(np.mean(aucs)), float(np.mean(aps)))
    return out


def slide_figures(directory) -> list[Path]:
    """Draw the two tables' ROC and precision-recall curves (one axes each) into ``directory``."""
    from boostkit import plot

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    return [
        plot.save(plot.roc_figure(SLIDE_TABLES, title="Yoder 2011, discrete classifiers: ROC"),
                  directory / "slides-roc.png"),
        plot.save(plot.pr_figure(SLIDE_TABLES, title="Yoder 2011, discrete classifiers: precision-recall"),
                  directory / "slides-pr.png"),
    ]


def _points(points) -> str:
    return " ".join(f"({a}, {b})" for a, b in points)


def _print_slides() -> None:
    for name, curves in slide_curves().items():
        gt, feat = SLIDE_TABLES[name]
        print(f"{name}: GT {gt.tolist()}, feat {feat.tolist()}")
        print(f"  ROC (FPR, TPR): {_points(curves['roc'])}")
        print(f"  PR (recall, precision): {_points(curves['pr'])}")
        print(f"  AUC {curves['auc']:.4f}, average precision {curves['average_precision']:.4f}")
    print("Pair distributions D[x0, x1] (rows x0 ranked below columns x1):")
    for name, matrix in slide_pair_distributions().items():
        print(f"  {name}")
        for row in matrix:
            print("    " + "  ".join(f"{str(f):>4}" for f in _fractions(row)))
    print("  (the slide prints 1/3 in both entries of e.g. 2, which do not sum to 1: D = 1/2)")


def _print_bound(dataset: str, n_rounds: int) -> None:
    model, losses, bounds = bound_trace(dataset, n_rounds)
    print(f"rankboost on {dataset}: training ranking loss <= prod Z_t")
    print(f"{'round':>5}  {'ranking loss':>12}  {'prod Z_t':>10}")
    for t in sorted({1, 2, 5, *range(10, model.n_rounds + 1, 10), model.n_rounds}):
        print(f"{t:>5}  {losses[t - 1]:>12.6f}  {bounds[t - 1]:>10.6f}")
    print(f"bound holds every round: {bool(np.all(losses <= bounds + 1e-12))}; "
          f"stop reason {model.stop_reason}")


def _print_datasets(n_rounds: int, n_folds: int) -> None:
    results = cross_validated_ranking(n_rounds=n_rounds, n_folds=n_folds)
    print(f"{n_folds}-fold CV, {n_rounds} rounds: AUC / average precision (mean over folds)")
    print(f"{'dataset':<24}" + "".join(f"{a:>24}" for a in ALGORITHMS))
    for name in DATASETS:
        cells = "".join(f"{results[name, a][0]:>13.4f} / {results[name, a][1]:.4f}" for a in ALGORITHMS)
        print(f"{name:<24}{cells}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m boostkit_rankboost.reproduce",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("slides", "bound", "figures", "datasets"))
    parser.add_argument("--dataset", default="ionosphere", help="for 'bound'")
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--folds", type=int, default=5, help="for 'datasets'")
    parser.add_argument("--output", default="docs/algorithms/img", help="for 'figures'")
    args = parser.parse_args(argv)
    if args.what == "slides":
        _print_slides()
    elif args.what == "bound":
        _print_bound(args.dataset, args.rounds)
    elif args.what == "figures":
        print("wrote " + ", ".join(str(p) for p in slide_figures(args.output)))
    else:
        _print_datasets(args.rounds, args.folds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
