"""Pictures: nested PN spaces (Scholz 2006, Fig. 1, Fig. 5) and learning curves (Fig. 6).

Needs matplotlib (``pip install boostkit[plot]``), imported when a picture is drawn. Run
``python -m boostkit_pnspace.plot --dataset mushroom --rounds 3 --output pnspace.png`` to fit
Ada2Boost and draw the PN spaces of its first rounds.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

import boostkit

from .pnspace import PNSpace, pn_spaces

__all__ = ["plot_dataset_curves", "plot_fig6", "plot_pn_spaces"]

COVERED_COLOUR = "tab:blue"
UNCOVERED_COLOUR = "tab:orange"
ALGORITHM_COLOURS = {"adaboost": "tab:gray", "ada2boost": "tab:red"}


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: never needs a display
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "drawing needs matplotlib; install it with pip install boostkit[plot]"
        ) from None
    return plt


def _odds(pos: float, neg: float) -> str:
    """The odds of a side as text; a pure side's are infinite (the paper's unsmoothed beta)."""
    return "∞" if neg == 0 else f"{pos / neg:.3g}"


def _draw_round(ax, space: PNSpace) -> None:
    """Fig. 5 for one round, in the coordinates of its own PN space (origin lower left).

    The covered box n x p sits at the origin and the uncovered box n_bar x p_bar above and to
    the right of it; their diagonals (slopes p/n and p_bar/n_bar) make the base classifier's
    ROC path. Stratified, they become squares of equal area (dashed), moved to the upper right
    corner: the next, nested PN space (thick outline), of side sqrt(p n) + sqrt(p_bar n_bar)
    for Ada2Boost.
    """
    from matplotlib.patches import Rectangle

    N, P = space.negatives, space.positives
    ax.add_patch(Rectangle((0, 0), N, P, fill=False, lw=1.2, ec="black"))
    ax.add_patch(Rectangle((0, 0), space.n, space.p, fc=COVERED_COLOUR, alpha=0.25, ec=COVERED_COLOUR,
                           label=f"covered C: p={space.p:.3g}, n={space.n:.3g}"))
    ax.add_patch(Rectangle((space.n, space.p), space.n_bar, space.p_bar, fc=UNCOVERED_COLOUR,
                           alpha=0.25, ec=UNCOVERED_COLOUR,
                           label=f"uncovered C̄: p̄={space.p_bar:.3g}, n̄={space.n_bar:.3g}"))
    ax.plot([0, space.n, N], [0, space.p, P], color="black", lw=1, ls=":")
    s, s_bar = space.covered_side, space.uncovered_side
    ax.add_patch(Rectangle((N - s_bar, P - s_bar), s_bar, s_bar, fill=False, ls="--", hatch="\\\\",
                           ec=UNCOVERED_COLOUR, lw=1.2, label="stratified C̄ (square)"))
    ax.add_patch(Rectangle((N - s_bar - s, P - s_bar - s), s, s, fill=False, ls="--", hatch="//",
                           ec=COVERED_COLOUR, lw=1.2, label="stratified C (square)"))
    after_n, after_p = space.negatives_after, space.positives_after
    ax.add_patch(Rectangle((N - after_n, P - after_p), after_n, after_p, fill=False, lw=2.2,
                           ec="black", label=f"next space: P'={after_p:.3g}, N'={after_n:.3g}"))
    ax.set_title(f"round {space.round}: β'(+1) = p/n = {_odds(space.p, space.n)}, "
                 f"β'(-1) = p̄/n̄ = {_odds(space.p_bar, space.n_bar)}", fontsize=9)
    ax.legend(loc="upper left", fontsize=7, framealpha=0.9)


def _draw_nested(ax, spaces: list[PNSpace]) -> None:
    """Fig. 1: every round's PN space inside the previous one, anchored at the upper right."""
    import matplotlib
    from matplotlib.patches import Rectangle

    N, P = spaces[0].negatives, spaces[0].positives
    sizes = [(s.negatives, s.positives) for s in spaces] + [
        (spaces[-1].negatives_after, spaces[-1].positives_after)]
    colours = matplotlib.colormaps["viridis"](np.linspace(0.0, 0.9, len(sizes)))
    for t, ((n_t, p_t), colour) in enumerate(zip(sizes, colours), start=1):
        x0, y0 = N - n_t, P - p_t
        ax.add_patch(Rectangle((x0, y0), n_t, p_t, fill=False, ec=colour, lw=1.6 if t == 1 else 1.1,
                               label=f"t={t}: P={p_t:.3g}, N={n_t:.3g}"))
        if t <= len(spaces):
            space = spaces[t - 1]
            ax.plot([x0, x0 + space.n, N], [y0, y0 + space.p, P], color=colour, lw=0.7, ls=":")
    ax.legend(loc="lower right", fontsize=6, ncol=2 if len(sizes) > 6 else 1, framealpha=0.9)
    ax.set_title(f"nested PN spaces before rounds 1–{len(sizes)} (Fig. 1)", fontsize=9)


def plot_pn_spaces(model: boostkit.BoostModel, X, y, sample_weight=None, rounds: int = 3,
                   nested_rounds: int = 10, path: str | Path | None = None):
    """Draw the PN spaces of a model's first rounds on its training data.

    One panel of the nested spaces of the first ``nested_rounds`` rounds (Fig. 1: the space of
    round t is anchored at the upper right of the original one, and the weight lost so far shows
    below and to the left of it) and one panel for each of the first ``rounds`` rounds in the
    manner of Fig. 5 (covered and uncovered boxes, their stratified squares moved to the upper
    right, the next space). Axes: negatives N (x) and positives P (y) in the paper's units,
    w_1 = 1 per example. Returns the matplotlib figure; with ``path``, also saves it.

    When the original set has fewer positives than negatives the first nested space can be
    taller than the original one (sqrt(P N) > P): stratifying moves weight to the positives.
    """
    plt = _pyplot()
    spaces = pn_spaces(model, X, y, sample_weight, max_rounds=max(rounds, nested_rounds))
    if not spaces:
        raise ValueError("the model has no rounds to draw")
    detailed = spaces[:rounds]
    panels = len(detailed) + 1
    columns = 2 if panels <= 4 else 3
    rows = math.ceil(panels / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5 * columns, 5 * rows), squeeze=False)
    axes = axes.ravel()
    _draw_nested(axes[0], spaces[:nested_rounds])
    for ax, space in zip(axes[1:], detailed):
        _draw_round(ax, space)
    top = max(max(s.positives, s.negatives, s.positives_after, s.negatives_after) for s in spaces)
    for ax in axes[:panels]:
        ax.set_xlabel("N (negatives)")
        ax.set_ylabel("P (positives)")
        ax.set_aspect("equal")
        ax.autoscale_view()
        ax.set_xlim(min(ax.get_xlim()[0], 0) - 0.02 * top, max(ax.get_xlim()[1], 0) + 0.02 * top)
        ax.set_ylim(min(ax.get_ylim()[0], 0) - 0.02 * top, max(ax.get_ylim()[1], 0) + 0.02 * top)
    for ax in axes[panels:]:
        ax.set_visible(False)
    fig.suptitle(f"{model.recipe.name}: PN spaces of the first rounds (Scholz 2006, Fig. 1, Fig. 5)")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig


# -- learning curves ----------------------------------------------------------------------------

_METRIC_TITLES = {"accuracy": "test ACC", "auc": "test AUC", "rmse": "test RMSE"}


def _curve(ax, values: np.ndarray, algorithm: str, label: str | None = None, style: str = "-"):
    sizes = np.arange(1, values.shape[1] + 1)
    mean = np.nanmean(values, axis=0)
    colour = ALGORITHM_COLOURS[algorithm]
    ax.plot(sizes, mean, style, color=colour, lw=1.5, label=label)
    if style == "-":
        std = np.nanstd(values, axis=0)
        ax.fill_between(sizes, mean - std, mean + std, color=colour, alpha=0.12, lw=0)


def plot_fig6(results: list[dict], path: str | Path):
    """Fig. 6: test ACC, AUC and RMSE against the number of stumps, one row per dataset."""
    from .study import LABELS, TEST_METRICS

    plt = _pyplot()
    fig, axes = plt.subplots(len(results), 3, figsize=(13, 2.8 * len(results)), squeeze=False)
    for row, result in zip(axes, results):
        for ax, metric in zip(row, TEST_METRICS):
            for algorithm, curves in result["curves"].items():
                _curve(ax, curves[metric], algorithm, LABELS[algorithm])
            ax.set_title(f"{result['dataset']}: {_METRIC_TITLES[metric]}", fontsize=9)
            ax.grid(alpha=0.3)
        row[0].legend(fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("stumps")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


def plot_dataset_curves(result: dict, path: str | Path):
    """One dataset: test ACC, AUC, RMSE (top) and the training PN-space curves (bottom).

    Bottom: the total weight W/|E| (log scale; it bounds the training error), the training AUC
    with Corollary 1's bound 1 - W^2/(8|E+||E-|) (dashed), and the AUC of the ensemble on the
    reweighted set, which Corollary 1 assumes to be >= 1/2.
    """
    from .study import LABELS, TEST_METRICS

    plt = _pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(14, 7.5))
    for ax, metric in zip(axes[0], TEST_METRICS):
        for algorithm, curves in result["curves"].items():
            _curve(ax, curves[metric], algorithm, LABELS[algorithm])
        ax.set_title(_METRIC_TITLES[metric])
    for algorithm, curves in result["curves"].items():
        label = LABELS[algorithm]
        _curve(axes[1, 0], curves["weight_fraction"], algorithm, label)
        _curve(axes[1, 1], curves["train_auc"], algorithm, f"{label}: training AUC")
        _curve(axes[1, 1], curves["auc_bound"], algorithm, f"{label}: Corollary 1 bound", "--")
        _curve(axes[1, 2], curves["weighted_auc"], algorithm, label)
    axes[1, 0].set_yscale("log")
    axes[1, 0].set_title("training: total weight W/|E|")
    axes[1, 1].set_title("training AUC and 1 − W²/(8|E+||E−|)")
    axes[1, 1].set_ylim(0.5, 1.001)
    axes[1, 2].axhline(0.5, color="black", lw=0.8, ls=":")
    axes[1, 2].set_title("AUC on the reweighted set (Cor. 1 needs ≥ 1/2)")
    for ax in axes.ravel():
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes[1]:
        ax.set_xlabel("stumps")
    fig.suptitle(f"{result['dataset']} ({result['n_examples']} × {result['n_features']}): "
                 "AdaBoost vs Ada²Boost, cross-validated")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


def main(argv: Sequence[str] | None = None) -> int:
    from .study import load_binary

    parser = argparse.ArgumentParser(
        prog="python -m boostkit_pnspace.plot",
        description="Fit on a dataset and draw the nested PN spaces of the first rounds.")
    parser.add_argument("--dataset", default="mushroom", help="dataset (default mushroom)")
    parser.add_argument("--algorithm", default="ada2boost", help="algorithm (default ada2boost)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds drawn one by one (default 3)")
    parser.add_argument("--nested-rounds", type=int, default=10,
                        help="rounds in the nested-spaces panel (default 10)")
    parser.add_argument("--output", default="pnspace.png", help="PNG file (default pnspace.png)")
    args = parser.parse_args(argv)
    X, y, _ = load_binary(args.dataset)
    model = boostkit.Booster(args.algorithm, n_rounds=max(args.rounds, args.nested_rounds)).fit(X, y)
    plot_pn_spaces(model, X, y, rounds=args.rounds, nested_rounds=args.nested_rounds,
                   path=args.output)
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
