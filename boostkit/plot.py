"""Plots of fitted models: ROC and precision-recall curves, learning curves, margins and weights.

Needs the ``plot`` extra (``pip install 'boostkit[plot]'``): matplotlib is imported only when a
figure is drawn, so ``import boostkit.plot`` stays cheap and the data helpers
(:func:`staged_evaluation`) work without it. Figures are built with matplotlib's object API
(``matplotlib.figure.Figure``), never pyplot, so drawing needs no display and touches no global
state; save them with :func:`save` (PNG of a fixed pixel size: ``figsize x DPI``).

ROC and precision-recall curves follow 003_e8f9baceaf668295.txt ("ROC & precision-recall"):
straight segments between the points of :func:`boostkit.metrics.roc_curve` and
:func:`boostkit.metrics.precision_recall_curve`, so tied scores draw one segment. Learning curves
show the training and test error and AUC of the staged predictions F_t against t; the margin
plot shows the cumulative distribution of the normalised training margins
y F_T(x) / sum_t max_i |c_t(x_i)| (in [-1, 1]) and of the final weights n D_{T+1}(i). For several
classes, the confusion-matrix figure colours each true class's row by the share of its examples
predicted as each class (recall on the diagonal) and writes the counts in the cells.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import attrs
import numpy as np

from .metrics import average_precision, precision_recall_curve, roc_auc, roc_curve

__all__ = [
    "DPI",
    "PANEL_SIZE",
    "StagedEvaluation",
    "confusion_matrix_figure",
    "learning_curve_figure",
    "margin_figure",
    "pr_figure",
    "require_matplotlib",
    "roc_figure",
    "save",
    "staged_evaluation",
]

DPI = 100
# One panel is 640 x 480 pixels; a two-panel figure is twice as wide.
PANEL_SIZE = (6.4, 4.8)


def require_matplotlib():
    """Import matplotlib, or raise an ImportError naming the ``plot`` extra."""
    try:
        import matplotlib
        from matplotlib.figure import Figure  # noqa: F401 (checks the object API is there)
    except ImportError as exc:
        raise ImportError(
            "boostkit.plot needs matplotlib, which is not installed: "
            "pip install 'boostkit[plot]'"
        ) from exc
    return matplotlib


def _figure(n_panels: int = 1):
    require_matplotlib()
    from matplotlib.figure import Figure

    figure = Figure(figsize=(PANEL_SIZE[0] * n_panels, PANEL_SIZE[1]), dpi=DPI)
    # Fixed margins: a layout engine would cost an extra draw pass for every figure.
    figure.subplots_adjust(left=0.1 / n_panels, right=1 - 0.03 / n_panels, bottom=0.1, top=0.93,
                           wspace=0.2)
    axes = [figure.add_subplot(1, n_panels, k + 1) for k in range(n_panels)]
    return figure, axes


# After matplotlib's ten cycle colours, ten darker ones, so up to twenty models stay distinct
# (boostkit compare draws every registered algorithm on one axes).
_MORE_COLOURS = ("#7f3b08", "#1b7837", "#762a83", "#b2182b", "#2166ac",
                 "#8c510a", "#01665e", "#c51b7d", "#4d9221", "#404040")


def _colour(index: int) -> str:
    if index < 10:
        return f"C{index}"
    return _MORE_COLOURS[(index - 10) % len(_MORE_COLOURS)]


def _width(index: int, count: int) -> float:
    # Earlier models get wider lines, so a model whose curve equals a later one's (bipartite and
    # explicit-pairs RankBoost) still shows as a border around it.
    return min(1.2 + 0.45 * (count - 1 - index), 3.0)


def save(figure, path: str | os.PathLike) -> Path:
    """Write ``figure`` to ``path`` (format from the suffix, e.g. ``.png``) at :data:`DPI`."""
    path = Path(path)
    figure.savefig(path, dpi=DPI)
    return path


# -- data ---------------------------------------------------------------------------------------


@attrs.frozen
class StagedEvaluation:
    """A model's staged predictions on one data set.

    ``error[t-1]`` and ``auc[t-1]``: the error sum_i [y_i F_t(x_i) <= 0] / n and the ROC AUC of
    F_t after round t (AUC is NaN if ``y`` holds one class). ``margins``: y_i F_T(x_i) divided by
    sum_t max_i |c_t(x_i)| (the largest contribution of each round on these examples), in
    [-1, 1]; 0 for a model whose contributions are all 0.
    """

    error: np.ndarray = attrs.field(eq=False)
    auc: np.ndarray = attrs.field(eq=False)
    margins: np.ndarray = attrs.field(eq=False)


def staged_evaluation(model, X, y) -> StagedEvaluation:
    """Error and AUC after every round, and the normalised final margins, of ``model`` on (X, y).

    ``y`` holds labels in {-1, +1} (or {0, 1}); one pass over the staged decision function.
    """
    y = np.where(np.asarray(y) == 1, 1.0, -1.0)
    both_classes = (y > 0).any() and (y < 0).any()
    errors, aucs = [], []
    previous = np.zeros(y.shape[0])
    scale = 0.0
    for margin in model.staged_decision_function(X):
        scale += float(np.max(np.abs(margin - previous)))
        previous = margin
        errors.append(float(np.mean(y * margin <= 0)))
        aucs.append(roc_auc(y, margin) if both_classes else np.nan)
    margins = y * previous / scale if scale > 0 else np.zeros_like(previous)
    return StagedEvaluation(np.array(errors), np.array(aucs), margins)


def _padded_mean(curves: Sequence[np.ndarray]) -> np.ndarray:
    """Mean over folds of per-round curves of different lengths.

    A fit that stopped early keeps its last model, so its curve is extended with its last value.
    """
    length = max(curve.shape[0] for curve in curves)
    padded = [np.pad(curve, (0, length - curve.shape[0]), mode="edge") for curve in curves]
    return np.mean(padded, axis=0)


# -- figures ------------------------------------------------------------------------------------


def roc_figure(curves: Mapping[str, tuple[np.ndarray, np.ndarray]], title: str = "ROC curves"):
    """ROC curves of several models on one axes: ``{name: (y_true, scores)}``.

    Each curve is labelled with its AUC; the dashed diagonal is chance.
    """
    figure, (ax,) = _figure()
    ax.plot([0, 1], [0, 1], linestyle="--", color="0.6", linewidth=1, label="chance")
    for k, (name, (y, scores)) in enumerate(curves.items()):
        fpr, tpr, _ = roc_curve(y, scores)
        ax.plot(fpr, tpr, color=_colour(k), linewidth=_width(k, len(curves)),
                label=f"{name} (AUC {roc_auc(y, scores):.3f})")
    ax.set(xlim=(0, 1), ylim=(0, 1.01), xlabel="false positive rate",
           ylabel="true positive rate", title=title, aspect="equal")
    ax.legend(loc="lower right", fontsize="small")
    return figure


def pr_figure(curves: Mapping[str, tuple[np.ndarray, np.ndarray]],
              title: str = "Precision-recall curves"):
    """Precision-recall curves of several models on one axes: ``{name: (y_true, scores)}``.

    Each curve is labelled with its average precision. The dashed line is the precision of a
    random ranking, the share of positives: grey when every curve has the same examples, else
    one per curve in its colour.
    """
    figure, (ax,) = _figure()
    shares = [float(np.mean(np.asarray(y) == 1)) for y, _ in curves.values()]
    for k, (name, (y, scores)) in enumerate(curves.items()):
        precision, recall, _ = precision_recall_curve(y, scores)
        ax.plot(recall, precision, color=_colour(k), linewidth=_width(k, len(curves)),
                label=f"{name} (AP {average_precision(y, scores):.3f})")
        if len(set(shares)) > 1:
            ax.axhline(shares[k], linestyle="--", color=_colour(k), linewidth=1,
                       label=f"random ({name})")
    if len(set(shares)) == 1:
        ax.axhline(shares[0], linestyle="--", color="0.6", linewidth=1, label="random")
    ax.set(xlim=(0, 1), ylim=(0, 1.01), xlabel="recall", ylabel="precision", title=title)
    ax.legend(loc="lower left", fontsize="small")
    return figure


def learning_curve_figure(train: Mapping[str, Iterable[StagedEvaluation]],
                          test: Mapping[str, Iterable[StagedEvaluation]],
                          title: str = "Learning curves"):
    """Error (left) and AUC (right) against rounds: training dashed, test solid.

    ``train`` and ``test`` map a model name to its :class:`StagedEvaluation` on each fold; the
    curves are means over folds.
    """
    figure, (error_ax, auc_ax) = _figure(2)
    for k, name in enumerate(test):
        for evaluations, style, kind in ((train.get(name, ()), "--", "train"),
                                         (test[name], "-", "test")):
            evaluations = list(evaluations)
            if not evaluations:
                continue
            error = _padded_mean([e.error for e in evaluations])
            auc = _padded_mean([e.auc for e in evaluations])
            rounds = np.arange(1, error.shape[0] + 1)
            for ax, values in ((error_ax, error), (auc_ax, auc)):
                ax.plot(rounds, values, linestyle=style, color=_colour(k),
                        linewidth=_width(k, len(test)), label=f"{name} {kind}")
    error_ax.set(xlabel="round t", ylabel="error of sign F_t", title=f"{title}: error")
    auc_ax.set(xlabel="round t", ylabel="ROC AUC of F_t", title=f"{title}: AUC")
    for ax in (error_ax, auc_ax):
        ax.grid(alpha=0.3)
    error_ax.legend(fontsize="x-small", ncol=2)
    return figure


def margin_figure(margins: Mapping[str, np.ndarray],
                  weights: Mapping[str, np.ndarray] | None = None,
                  title: str = "Training margins and weights"):
    """Cumulative distributions of normalised margins (left) and final weights n D(i) (right).

    ``margins`` maps a model name to normalised training margins (:class:`StagedEvaluation`),
    ``weights`` to n D_{T+1}(i): the final distribution over the n training examples of each of
    its fits times n (so 1 is the uniform weight), concatenated.
    """
    figure, (margin_ax, weight_ax) = _figure(2)
    for k, (name, values) in enumerate(margins.items()):
        values = np.sort(np.asarray(values))
        margin_ax.step(values, np.arange(1, values.shape[0] + 1) / values.shape[0], where="post",
                       color=_colour(k), linewidth=_width(k, len(margins)), label=name)
    margin_ax.axvline(0.0, color="0.6", linewidth=1)
    margin_ax.set(xlim=(-1, 1), ylim=(0, 1), xlabel="normalised margin y F(x) / sum_t max|c_t|",
                  ylabel="fraction of training examples", title=f"{title}: margins")
    margin_ax.legend(fontsize="small", loc="upper left")
    for k, name in enumerate(margins):
        values = (weights or {}).get(name)
        if values is None:
            continue
        values = np.sort(np.asarray(values))
        values = values[values > 0]
        weight_ax.step(values, np.arange(1, values.shape[0] + 1) / values.shape[0], where="post",
                       color=_colour(k), linewidth=_width(k, len(margins)), label=name)
    weight_ax.set(xscale="log", ylim=(0, 1), xlabel="n D(i) (1 = uniform)",
                  ylabel="fraction of training examples", title=f"{title}: final weights")
    weight_ax.axvline(1.0, color="0.6", linewidth=1)
    for ax in (margin_ax, weight_ax):
        ax.grid(alpha=0.3)
    return figure


def confusion_matrix_figure(matrix, labels: Sequence, title: str = "Confusion matrix"):
    """A confusion matrix (:func:`boostkit.metrics.confusion_matrix`) as a heat map.

    ``matrix[i, j]`` counts the examples of true class ``labels[i]`` predicted as
    ``labels[j]``. Each row is normalised by its total, so a cell's colour is the share of that
    class predicted as the column's class (the diagonal is each class's recall, rows with no
    example stay blank) and the colour scale is the same for rare and common classes; the cell
    shows the count and, up to ten classes, that share in per cent. Legible up to about ten
    classes; the row totals are in the row labels, and ``title`` may take two lines.
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    labels = [str(label) for label in labels]
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] == 0:
        raise ValueError(f"matrix must be a square (K, K) array, got shape {matrix.shape}")
    if not np.isfinite(matrix).all() or (matrix < 0).any():
        raise ValueError("matrix must hold finite, non-negative counts")
    if len(labels) != matrix.shape[0]:
        raise ValueError(f"labels has {len(labels)} names but matrix has {matrix.shape[0]} rows")
    k = matrix.shape[0]
    totals = matrix.sum(axis=1)
    shares = np.divide(matrix, totals[:, None], out=np.zeros_like(matrix),
                       where=totals[:, None] > 0)
    # Counts as integers; sums of example weights with three significant digits.
    number = "{:.0f}" if np.array_equal(matrix, np.round(matrix)) else "{:.3g}"
    figure, (ax,) = _figure()
    # Room for the row labels with their totals, slanted column labels, the colour bar and a
    # title of two lines.
    figure.subplots_adjust(left=0.2, right=0.9, bottom=0.16, top=0.88)
    image = ax.imshow(shares, cmap="Blues", vmin=0.0, vmax=1.0)
    figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="share of the true class")
    size = "medium" if k <= 5 else "small" if k <= 7 else "x-small" if k <= 10 else "xx-small"
    for i in range(k):
        for j in range(k):
            count = number.format(matrix[i, j])
            text = f"{count}\n{100 * shares[i, j]:.0f}%" if k <= 10 else count
            ax.text(j, i, text, ha="center", va="center", fontsize=size,
                    color="white" if shares[i, j] > 0.6 else "black")
    slanted = max(map(len, labels)) > 3  # long names would overlap side by side
    ax.set_xticks(range(k), labels, rotation=30 if slanted else 0,
                  ha="right" if slanted else "center")
    ax.set_yticks(range(k), [f"{name} ({number.format(t)})" for name, t in zip(labels, totals)])
    ax.set(xlabel="predicted class", ylabel="true class (examples)", title=title)
    return figure
