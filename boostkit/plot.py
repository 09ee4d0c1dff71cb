"""Plots of fitted models: ROC and precision-recall curves, learning curves, margins and weights.

Needs the ``plot`` extra (``pip install 'boostkit[plot]'``): matplotlib is imported only when a
figure is drawn, so ``import boostkit.plot`` stays cheap and the data helpers
(:func:`staged_evaluation`) work without it. Figures are built with matplotlib's object API
(``matplotlib.figure.Figure``), never pyplot, so drawing needs no display and touches no global
state; save them with :func:`save` (PNG of a fixed pixel size: ``figsize x DPI``).

ROC and precision-recall curves follow Yoder 2011 ("ROC & precision-recall"):
straight segments between the points of :func:`boostkit.metrics.roc_curve` and
:func:`boostkit.metrics.precision_recall_curve`, so tied scores draw one segment. Learning curves
show the training and test error and AUC of the staged predictions F_t against t; the margin
plot shows the cumulative distribution of the normalised training margins
y F_T(x) / sum_t max_i |c_t(x_i)| (in [-1, 1]) and of the final weights n D_{T+1}(i). For several
classes, the confusion-matrix figure colours each true class's row by the share of its examples
predicted as each class (recall on the diagonal) and writes the counts in the cells. The
feature-importance figure names the columns as the training data did (a DataFrame's names).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import attrs
import numpy as np

from .errors import DataError
from .metrics import average_precision, precision_recall_curve, roc_auc, roc_curve

__all__ = [
    "DPI",
    "LEGEND_WIDTH",
    "MAX_HIGHLIGHTED",
    "PANEL_SIZE",
    "StagedEvaluation",
    "confusion_matrix_figure",
    "feature_importance_figure",
    "learning_curve_figure",
    "margin_figure",
    "pr_figure",
    "require_matplotlib",
    "roc_figure",
    "save",
    "staged_evaluation",
]

DPI = 100
# One panel is 640 x 480 pixels; a two-panel figure is twice as wide; figures of several models
# add a legend column of LEGEND_WIDTH to the right (960 x 480 and 1600 x 480 pixels).
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


# Width of the legend column to the right of the axes (inches): with twenty models a legend
# inside the axes covers the curves.
LEGEND_WIDTH = 3.2


def _figure(n_panels: int = 1, legend: bool = False):
    require_matplotlib()
    from matplotlib.figure import Figure

    panels = PANEL_SIZE[0] * n_panels
    width = panels + (LEGEND_WIDTH if legend else 0.0)
    figure = Figure(figsize=(width, PANEL_SIZE[1]), dpi=DPI)
    # Fixed margins: a layout engine would cost an extra draw pass for every figure.
    left, right = 0.65 / width, (panels - 0.2) / width
    figure.subplots_adjust(left=left, right=right, bottom=0.1, top=0.9,
                           wspace=0.25 if n_panels > 1 else 0.2)
    axes = [figure.add_subplot(1, n_panels, k + 1) for k in range(n_panels)]
    return figure, axes


# Highlighted models: ten well separated colours, then the same colours dashed, dash-dotted and
# dotted, so up to forty stay distinct; the others are drawn thin and grey behind them.
_STYLES = ("-", (0, (5, 1.5)), "-.", ":")
OTHERS_COLOUR = "0.72"
# With more models than this, a figure highlights the best this many and greys the rest.
MAX_HIGHLIGHTED = 8
WEIGHT_FLOOR = 1e-6


# matplotlib's ten cycle colours without its grey (C7), which reads as "the others", and a dark
# olive instead.
_COLOURS = ("C0", "C1", "C2", "C3", "C4", "C5", "C6", "#4d4d00", "C8", "C9")


def _colour(index: int) -> str:
    return _COLOURS[index % len(_COLOURS)]


def _style(index: int):
    return _STYLES[(index // 10) % len(_STYLES)]


def _width(index: int, count: int) -> float:
    # Earlier models get wider lines, so a model whose curve equals a later one's (bipartite and
    # explicit-pairs RankBoost) still shows as a border around it.
    return min(1.3 + 0.35 * (count - 1 - index), 3.0)


def _highlighted(names: Sequence[str], highlight: Iterable[str] | None,
                 score: Mapping[str, float] | None = None) -> list[str]:
    """The names drawn in colour, in their order in ``names``: ``highlight`` if given; else all
    of them up to :data:`MAX_HIGHLIGHTED`, or the best that many by ``score``."""
    names = list(names)
    if highlight is not None:
        chosen = set(highlight)
    elif len(names) <= MAX_HIGHLIGHTED or not score:
        chosen = set(names[:MAX_HIGHLIGHTED]) if not score else set(names)
    else:
        ranked = sorted(names, key=lambda n: -np.nan_to_num(score.get(n, -np.inf), nan=-np.inf))
        chosen = set(ranked[:MAX_HIGHLIGHTED])
    return [name for name in names if name in chosen]


class _Painter:
    """Line styles of a figure: colour, dash and width for the highlighted models, thin grey for
    the others (one legend entry for all of them)."""

    def __init__(self, names: Sequence[str], highlighted: Sequence[str]):
        self.highlighted = list(highlighted)
        self.others = [name for name in names if name not in set(highlighted)]
        self._labelled_others: set = set()

    def kwargs(self, name: str, label: str, ax=None) -> dict:
        if name in self.highlighted:
            k = self.highlighted.index(name)
            return {"color": _colour(k), "linestyle": _style(k), "zorder": 3,
                    "linewidth": _width(k, len(self.highlighted)), "label": label}
        key = id(ax)
        first = key not in self._labelled_others
        self._labelled_others.add(key)
        n = len(self.others)
        return {"color": OTHERS_COLOUR, "linewidth": 0.9, "zorder": 2, "linestyle": "-",
                "label": f"{n} other model{'s' if n > 1 else ''} (grey)" if first else "_nolegend_"}


def _grid(n_panels: int, title: str, columns: int = 4):
    """A figure of ``n_panels`` small panels, ``columns`` to a row, sharing both axes."""
    require_matplotlib()
    from matplotlib.figure import Figure

    columns = max(1, min(columns, n_panels))
    rows = -(-n_panels // columns)
    width, height = 4.0 * columns, 3.4 * rows + 0.9
    figure = Figure(figsize=(width, height), dpi=DPI)
    figure.subplots_adjust(left=0.5 / width, right=1 - 0.15 / width, bottom=0.5 / height,
                           top=1 - 0.9 / height, hspace=0.35, wspace=0.12)
    axes = figure.subplots(rows, columns, sharex=True, sharey=True, squeeze=False).ravel()
    for ax in axes[n_panels:]:
        ax.set_visible(False)
    figure.suptitle(title)
    return figure, list(axes[:n_panels]), columns


def _family_panels(curves: Mapping[str, tuple[np.ndarray, np.ndarray]],
                   groups: Mapping[str, Sequence[str]], title: str, points, label, xlabel,
                   ylabel, legend_loc, background=None, log_x: float | None = None):
    """Small multiples: one panel per group, its models in colour over every other model in
    thin grey; ``points(y, scores)`` gives a curve's (x, y) and ``label(name)`` its legend.
    With ``log_x``, the x axis is logarithmic from ``log_x`` to 1."""
    drawn = {name: points(*curves[name]) for name in curves}
    panels = [(group, [n for n in names if n in curves]) for group, names in groups.items()]
    panels = [(group, names) for group, names in panels if names]
    figure, axes, columns = _grid(len(panels), title)
    for k, (ax, (group, names)) in enumerate(zip(axes, panels)):
        if background is not None:
            background(ax)
        for name, (x, y) in drawn.items():
            if name not in names:
                ax.plot(x, y, color=OTHERS_COLOUR, linewidth=0.7, zorder=1)
        for j, name in enumerate(names):
            x, y = drawn[name]
            ax.plot(x, y, color=_colour(j), linestyle=_style(j), zorder=3,
                    linewidth=_width(j, len(names)), label=label(name))
        ax.set(ylim=(0, 1.01), title=f"{group} ({len(names)})")
        if log_x is None:
            ax.set_xlim(0, 1)
        else:
            _log_fpr_axis(ax, log_x)
        ax.title.set_fontsize("medium")
        ax.grid(alpha=0.3)
        ax.legend(loc=legend_loc, fontsize="small", framealpha=0.85)
        if k % columns == 0:
            ax.set_ylabel(ylabel)
        if k >= len(panels) - columns:
            ax.set_xlabel(xlabel)
            ax.xaxis.set_tick_params(labelbottom=True)
    return figure


def _others_last(handles: list, labels: list) -> tuple[list, list]:
    """Legend entries with the grey "other models" entry moved after the highlighted ones."""
    pairs = sorted(zip(handles, labels), key=lambda hl: hl[1].endswith("(grey)"))
    return [h for h, _ in pairs], [l for _, l in pairs]


def _outside_legend(ax, title: str | None = None, **kwargs):
    """The legend to the right of ``ax``, outside the axes."""
    return ax.legend(*_others_last(*ax.get_legend_handles_labels()), loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                     fontsize="small", title=title, title_fontsize="small", frameon=False,
                     **kwargs)


def save(figure, path: str | os.PathLike) -> Path:
    """Write ``figure`` to ``path`` (format from the suffix, e.g. ``.png``) at :data:`DPI`."""
    path = Path(path)
    figure.savefig(path, dpi=DPI)
    return path


# -- data ---------------------------------------------------------------------------------------


@attrs.frozen
class StagedEvaluation:
    """A model's staged predictions on one data set.

    ``error[t-1]`` and ``auc[t-1]``: the share of examples whose label ``predict`` would get wrong
    after round t (``classes[1]`` where F_t(x) > 0), and the ROC AUC of F_t with ``classes[1]``
    positive (NaN if ``y`` holds one class). With y_i = +1 for ``classes[1]`` and -1 for
    ``classes[0]``, the error is sum_i [y_i sign(F_t(x_i)) < 0] / n, sign(0) = -1.
    ``margins``: y_i F_T(x_i) divided by sum_t max_i |c_t(x_i)| (the largest contribution of
    each round on these examples), in [-1, 1]; 0 for a model whose contributions are all 0.
    """

    error: np.ndarray = attrs.field(eq=False)
    auc: np.ndarray = attrs.field(eq=False)
    margins: np.ndarray = attrs.field(eq=False)


def staged_evaluation(model, X, y) -> StagedEvaluation:
    """Error and AUC after every round, and the normalised final margins, of a two-class
    ``model`` on (X, y).

    ``y`` holds the model's labels (``model.classes``, as ``fit`` was given them: ``'b'``/``'g'``,
    0/1 or -1/+1), mapped as ``predict`` maps them: ``classes[1]`` is the positive class. A label
    the model does not have, or a model of more than two classes, raises
    :class:`boostkit.DataError`. One pass over the staged decision function.
    """
    y = _signed_labels(model, y)
    both_classes = (y > 0).any() and (y < 0).any()
    errors, aucs = [], []
    previous = np.zeros(y.shape[0])
    scale = 0.0
    for margin in model.staged_decision_function(X):
        scale += float(np.max(np.abs(margin - previous)))
        previous = margin
        errors.append(float(np.mean((margin > 0) != (y > 0))))
        aucs.append(roc_auc(y, margin) if both_classes else np.nan)
    margins = y * previous / scale if scale > 0 else np.zeros_like(previous)
    return StagedEvaluation(np.array(errors), np.array(aucs), margins)


def _signed_labels(model, y) -> np.ndarray:
    """``y`` as +1 for the model's ``classes[1]`` and -1 for ``classes[0]``, as ``predict`` reads
    the sign of F; anything else is refused rather than silently counted as -1."""
    classes = np.asarray(model.classes)
    multilabel = getattr(model, "multilabel", False)
    if classes.shape[0] != 2 or multilabel:
        raise DataError(
            "staged_evaluation needs a model of two classes (one margin column), got one of "
            f"{classes.shape[0]} {'labels' if multilabel else 'classes'} {classes.tolist()!r}"
        )
    y = np.asarray(y)
    if y.ndim != 1:
        raise DataError(f"y must be one label per example, got an array of shape {y.shape}")
    known = np.isin(y, classes)
    if not known.all():
        unknown = np.unique(y[~known])
        raise DataError(
            f"y holds label(s) {unknown[:5].tolist()!r} that the model does not have: its classes "
            f"are {classes.tolist()!r} ({classes[1]!r} positive). Pass the labels the model was "
            "fitted on"
        )
    return np.where(y == classes[1], 1.0, -1.0)


def _padded_mean(curves: Sequence[np.ndarray]) -> np.ndarray:
    """Mean over folds of per-round curves of different lengths.

    A fit that stopped early keeps its last model, so its curve is extended with its last value.
    """
    length = max(curve.shape[0] for curve in curves)
    padded = [np.pad(curve, (0, length - curve.shape[0]), mode="edge") for curve in curves]
    return np.mean(padded, axis=0)


# -- figures ------------------------------------------------------------------------------------


def _fpr_floor(curves: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> float:
    """Half the smallest non-zero false-positive rate of any curve: the left end of a log
    false-positive axis (a rate of 0 is drawn at its edge)."""
    negatives = max(int(np.sum(np.asarray(y) != 1)) for y, _ in curves.values())
    return 0.5 / max(negatives, 1)


def _log_fpr_axis(ax, floor: float):
    # Curves that coincide at full scale part where few false positives are allowed.
    ax.set_xscale("log", nonpositive="clip")
    ax.set_xlim(floor, 1)


def roc_figure(curves: Mapping[str, tuple[np.ndarray, np.ndarray]], title: str = "ROC curves",
               highlight: Iterable[str] | None = None,
               groups: Mapping[str, Sequence[str]] | None = None):
    """ROC curves of several models: ``{name: (y_true, scores)}``; the left panel at full
    scale, the right one on a log false-positive axis (from half of 1 / the number of
    negatives), where curves that coincide at full scale part.

    With ``groups`` (``{group: [names]}``, e.g. the plugin of each recipe), small multiples
    instead: one panel per group, on the log false-positive axis, with its models in colour
    over all the others in grey, each model labelled with its AUC.

    Each curve is labelled with the AUC of its scores (for ``boostkit compare``: all out-of-fold
    scores pooled, which may differ from the mean of per-fold AUCs); the dashed line is
    chance. The legend is outside the axes. With more than :data:`MAX_HIGHLIGHTED` models (or
    the names in ``highlight``), the best by AUC are in colour and the rest thin grey.
    """
    aucs = {name: roc_auc(y, scores) for name, (y, scores) in curves.items()}
    floor = _fpr_floor(curves)
    chance = np.geomspace(floor, 1, 50)
    if groups:
        def background(ax):
            ax.plot(chance, chance, linestyle="--", color="0.6", linewidth=1)

        return _family_panels(
            curves, groups, title, lambda y, s: roc_curve(y, s)[:2],
            lambda name: f"{name} {aucs[name]:.3f}", "false positive rate (log scale)",
            "true positive rate", "lower right", background, log_x=floor)
    figure, (ax, log_ax) = _figure(2, legend=True)
    painter = _Painter(list(curves), _highlighted(list(curves), highlight, aucs))
    ax.plot([0, 1], [0, 1], linestyle="--", color="0.6", linewidth=1, label="chance")
    log_ax.plot(chance, chance, linestyle="--", color="0.6", linewidth=1, label="chance")
    for name, (y, scores) in curves.items():
        fpr, tpr, _ = roc_curve(y, scores)
        for axes in (ax, log_ax):
            axes.plot(fpr, tpr, **painter.kwargs(name, f"{name} (AUC {aucs[name]:.3f})", axes))
    ax.set(xlim=(0, 1), ylim=(0, 1.01), xlabel="false positive rate",
           ylabel="true positive rate", title=title, aspect="equal")
    log_ax.set(ylim=(0, 1.01), xlabel="false positive rate (log scale)",
               title="the same curves, false positive rate on a log scale")
    _log_fpr_axis(log_ax, floor)
    for axes in (ax, log_ax):
        axes.grid(alpha=0.3)
    _outside_legend(log_ax)
    return figure


def pr_figure(curves: Mapping[str, tuple[np.ndarray, np.ndarray]],
              title: str = "Precision-recall curves", highlight: Iterable[str] | None = None,
              groups: Mapping[str, Sequence[str]] | None = None):
    """Precision-recall curves of several models on one axes: ``{name: (y_true, scores)}``.

    Each curve is labelled with its average precision. The dashed line is the precision of a
    random ranking, the share of positives: grey when every curve has the same examples, else
    one per curve in its colour. Highlighting and ``groups`` (small multiples) as in
    :func:`roc_figure`, labelled with average precision.
    """
    shares = [float(np.mean(np.asarray(y) == 1)) for y, _ in curves.values()]
    aps = {name: average_precision(y, scores) for name, (y, scores) in curves.items()}
    if groups:
        def random(ax):
            if len(set(shares)) == 1:
                ax.axhline(shares[0], linestyle="--", color="0.6", linewidth=1)

        return _family_panels(
            curves, groups, title, lambda y, s: precision_recall_curve(y, s)[1::-1],
            lambda name: f"{name} {aps[name]:.3f}", "recall", "precision", "lower left", random)
    figure, (ax,) = _figure(legend=True)
    painter = _Painter(list(curves), _highlighted(list(curves), highlight, aps))
    for k, (name, (y, scores)) in enumerate(curves.items()):
        precision, recall, _ = precision_recall_curve(y, scores)
        style = painter.kwargs(name, f"{name} (AP {aps[name]:.3f})", ax)
        ax.plot(recall, precision, **style)
        if len(set(shares)) > 1:
            ax.axhline(shares[k], linestyle="--", color=style["color"], linewidth=1,
                       label=f"random ({name})")
    if len(set(shares)) == 1:
        ax.axhline(shares[0], linestyle="--", color="0.6", linewidth=1, label="random")
    ax.set(xlim=(0, 1), ylim=(0, 1.01), xlabel="recall", ylabel="precision", title=title)
    ax.grid(alpha=0.3)
    _outside_legend(ax)
    return figure


def learning_curve_figure(train: Mapping[str, Iterable[StagedEvaluation]],
                          test: Mapping[str, Iterable[StagedEvaluation]],
                          title: str = "Learning curves", highlight: Iterable[str] | None = None):
    """Error (left) and AUC (right) against rounds: training dashed, test solid.

    ``train`` and ``test`` map a model name to its :class:`StagedEvaluation` on each fold; the
    curves are means over folds. One legend, outside the axes, names each highlighted model by
    its colour (highlighted: ``highlight``, else all up to :data:`MAX_HIGHLIGHTED`, else the best
    by final test AUC); the other models are drawn thin grey, test curves only.
    """
    figure, (error_ax, auc_ax) = _figure(2, legend=True)
    names = list(test)
    # The error axis is logarithmic (curves that coincide near 0 part there); an error of 0
    # is drawn at half the smallest non-zero error of the largest set.
    examples = [e.margins.shape[0] for source in (train, test) for evaluations in source.values()
                for e in evaluations if e is not None]
    error_floor = 0.5 / max(examples, default=1)
    final_auc = {}
    for name in names:
        evaluations = list(test[name])
        if evaluations:
            final_auc[name] = float(_padded_mean([e.auc for e in evaluations])[-1])
    painter = _Painter(names, _highlighted(names, highlight, final_auc))
    for name in names:
        for evaluations, dashed, kind in ((train.get(name, ()), True, "train"),
                                          (test[name], False, "test")):
            evaluations = list(evaluations)
            if not evaluations or (dashed and name not in painter.highlighted):
                continue
            error = np.maximum(_padded_mean([e.error for e in evaluations]), error_floor)
            auc = _padded_mean([e.auc for e in evaluations])
            rounds = np.arange(1, error.shape[0] + 1)
            for ax, values in ((error_ax, error), (auc_ax, auc)):
                style = painter.kwargs(name, name, ax)
                if ax is not auc_ax or kind == "train":
                    style["label"] = "_nolegend_"
                if name in painter.highlighted:
                    style["linestyle"] = (0, (2, 1.5)) if dashed else "-"
                    style["linewidth"] = min(style["linewidth"], 2.2)
                ax.plot(rounds, values, **style)
    # F_t is the model of its first t terms (a back-fitting round re-fits a term, adding none).
    error_ax.set_yscale("log")
    error_ax.set(xlabel="terms t", ylabel=f"error of sign F_t (log scale; 0 at {error_floor:.1e})",
                 title=f"{title}: error")
    auc_ax.set(xlabel="terms t", ylabel="ROC AUC of F_t", title=f"{title}: AUC")
    for ax in (error_ax, auc_ax):
        ax.grid(alpha=0.3)
    handles, labels = _others_last(*auc_ax.get_legend_handles_labels())
    from matplotlib.lines import Line2D

    handles += [Line2D([], [], color="black", linestyle="-"),
                Line2D([], [], color="black", linestyle=(0, (2, 1.5)))]
    labels += ["test (solid)", "train (dashed)"]
    auc_ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.03, 1.0),
                  borderaxespad=0.0, fontsize="small", frameon=False,
                  title="means over folds", title_fontsize="small")
    return figure


def margin_figure(margins: Mapping[str, np.ndarray],
                  weights: Mapping[str, np.ndarray] | None = None,
                  title: str = "Training margins and weights",
                  highlight: Iterable[str] | None = None):
    """Cumulative distributions of normalised margins (left) and final weights n D(i) (right).

    ``margins`` maps a model name to normalised training margins (:class:`StagedEvaluation`),
    ``weights`` to n D_{T+1}(i): the final distribution over the n training examples of each of
    its fits times n (so 1 is the uniform weight), concatenated. Highlighted models
    (``highlight``, else the first :data:`MAX_HIGHLIGHTED`) in colour, the rest thin grey; one
    legend outside the axes.
    """
    figure, (margin_ax, weight_ax) = _figure(2, legend=True)
    names = list(margins)
    painter = _Painter(names, _highlighted(names, highlight))
    for name, values in margins.items():
        values = np.sort(np.asarray(values))
        margin_ax.step(values, np.arange(1, values.shape[0] + 1) / values.shape[0], where="post",
                       **painter.kwargs(name, name, margin_ax))
    margin_ax.axvline(0.0, color="0.6", linewidth=1)
    margin_ax.set(xlim=(-1, 1), ylim=(0, 1), xlabel="normalised margin y F(x) / sum_t max|c_t|",
                  ylabel="fraction of training examples", title=f"{title}: margins")
    for name in margins:
        values = (weights or {}).get(name)
        if values is None:
            continue
        values = np.sort(np.asarray(values))
        values = values[values > 0]
        style = painter.kwargs(name, name, weight_ax)
        style["label"] = "_nolegend_"
        weight_ax.step(values, np.arange(1, values.shape[0] + 1) / values.shape[0], where="post",
                       **style)
    weight_ax.set(xscale="log", ylim=(0, 1), ylabel="fraction of training examples",
                  title=f"{title}: final weights")
    low = weight_ax.get_xlim()[0]
    # Weights below 1e-6 of the uniform one are nil for the fit: not worth 60 decades of axis.
    weight_ax.set_xlim(left=max(low, WEIGHT_FLOOR))
    weight_ax.set_xlabel("n D(i) (1 = uniform)" + (f"; below {WEIGHT_FLOOR:g} at the left edge"
                                                  if low < WEIGHT_FLOOR else ""))
    weight_ax.axvline(1.0, color="0.6", linewidth=1)
    for ax in (margin_ax, weight_ax):
        ax.grid(alpha=0.3)
    handles, labels = _others_last(*margin_ax.get_legend_handles_labels())
    weight_ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.03, 1.0),
                     borderaxespad=0.0, fontsize="small", frameon=False)
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


def feature_importance_figure(importances, feature_names: Sequence[str] | None = None,
                              title: str = "Feature importances", top: int = 20):
    """The ``top`` largest feature importances (:meth:`boostkit.BoostModel.feature_importances`)
    as horizontal bars, largest first, labelled with the columns' names (``x[j]`` for unnamed
    data: pass ``model.feature_names``)."""
    importances = np.asarray(importances, dtype=np.float64)
    if importances.ndim != 1 or importances.shape[0] == 0:
        raise ValueError(f"importances must be a non-empty 1-D array, got shape {importances.shape}")
    if not np.isfinite(importances).all() or (importances < 0).any():
        raise ValueError("importances must be finite and non-negative")
    if feature_names is not None and len(feature_names) != importances.shape[0]:
        raise ValueError(f"feature_names has {len(feature_names)} names but there are "
                         f"{importances.shape[0]} importances")
    names = ([f"x[{j}]" for j in range(importances.shape[0])] if feature_names is None
             else [str(name) for name in feature_names])
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1:
        raise ValueError(f"top must be a positive integer, got {top!r}")
    order = np.argsort(-importances, kind="stable")[:top]
    figure, (ax,) = _figure()
    longest = max(len(names[j]) for j in order)
    figure.subplots_adjust(left=min(0.12 + 0.012 * longest, 0.45), right=0.95)
    positions = np.arange(order.shape[0])[::-1]
    ax.barh(positions, importances[order], color=_colour(0))
    ax.set_yticks(positions, [names[j] for j in order],
                  fontsize="small" if order.shape[0] > 12 else "medium")
    ax.set(xlabel="importance (share of sum |coefficient| x |edge|)", title=title)
    return figure
