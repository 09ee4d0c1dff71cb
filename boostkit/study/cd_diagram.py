"""The critical-difference diagram of a comparison (Demšar 2006, section 3.2.4, Figure 1a).

An axis of average ranks, turned so that the best rank (1) is on the right; each algorithm's
name hangs from its average rank, the better half on the right and the other half on the left;
thick bars join the cliques, the groups of algorithms the Nemenyi test does not tell apart; the
critical difference is drawn above the axis. Needs matplotlib (the ``plot`` extra) and draws with
its object API, as :mod:`boostkit.plot` does.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Sequence

from ..plot import require_matplotlib, save
from .stats import Comparison, StatsError

__all__ = ["critical_difference_diagram"]

# Layout in inches: the width of one character of a 10-point label (an upper bound for the
# names of algorithms, so that no name runs off the figure), the distance between two name rows
# and between two rows of clique bars, and the width of the axis per rank.
_CHAR = 0.085
_ROW = 0.3
_BAR_ROW = 0.13
_PER_RANK = 0.7


def _bar_rows(spans: Sequence[tuple[float, float]]) -> list[int]:
    """A row for each (left, right) span, the first where it overlaps no span already there."""
    ends: list[float] = []
    rows = []
    for left, right in spans:
        row = next((r for r, end in enumerate(ends) if left > end), len(ends))
        if row == len(ends):
            ends.append(right)
        ends[row] = right
        rows.append(row)
    return rows


def _draw(ax, comparison: Comparison, width: float, text: float) -> float:
    """Draw into ``ax`` (inches as data units, y downwards); return the height used."""
    ranking = comparison.ranking
    k = len(ranking)
    rank_of = dict(ranking)
    axis = width - 2 * text

    def x(rank: float) -> float:
        return text + (k - rank) / (k - 1) * axis

    # The critical difference, from the worst end of the axis.
    cd = comparison.critical_difference
    y_cd, y_axis = 0.3, 0.8
    left, right = x(k), x(k) + cd * axis / (k - 1)
    ax.plot([left, right], [y_cd, y_cd], color="k", lw=1.2)
    for end in (left, right):
        ax.plot([end, end], [y_cd - 0.05, y_cd + 0.05], color="k", lw=1.2)
    ax.text((left + right) / 2, y_cd - 0.07,
            f"CD = {cd:.2f} (Nemenyi, \N{GREEK SMALL LETTER ALPHA} = {comparison.alpha:g})",
            ha="left" if right - left < 1.5 else "center", va="bottom", fontsize=9)

    # The axis of ranks: k on the left, 1 on the right.
    ax.plot([x(k), x(1)], [y_axis, y_axis], color="k", lw=1.2)
    step = 1 if k <= 20 else 2
    for r in range(1, k + 1):
        ax.plot([x(r), x(r)], [y_axis - 0.06, y_axis], color="k", lw=1.0)
        if (r - 1) % step == 0 or r == k:
            ax.text(x(r), y_axis - 0.09, str(r), ha="center", va="bottom", fontsize=9)

    # Cliques: thick bars under the axis, a little wider than the ranks they join.
    spans = sorted((x(max(rank_of[n] for n in c)) - 0.06, x(min(rank_of[n] for n in c)) + 0.06)
                   for c in comparison.cliques)
    rows = _bar_rows(spans)
    y_bars = y_axis + 0.22
    for (left, right), row in zip(spans, rows):
        ax.plot([left, right], [y_bars + row * _BAR_ROW] * 2, color="k", lw=4,
                solid_capstyle="butt", zorder=3)
    y_names = y_bars + (max(rows) + 1 if rows else 0) * _BAR_ROW + 0.2

    # Names: the better half on the right, best nearest the axis; the rest on the left, worst
    # nearest the axis, so that no two leader lines cross.
    half = math.ceil(k / 2)
    sides = ((ranking[:half], text + axis + 0.15, "left"),
             (ranking[half:][::-1], text - 0.15, "right"))
    bottom = y_names
    for names, end, align in sides:
        for row, (name, rank) in enumerate(names):
            y = y_names + row * _ROW
            ax.plot([x(rank), x(rank), end + (0.05 if align == "right" else -0.05)],
                    [y_axis, y, y], color="0.25", lw=0.9, zorder=2)
            ax.plot([x(rank)], [y_axis], "o", color="k", ms=3, zorder=4)
            ax.text(end, y, f"{name} ({rank:.2f})", ha=align, va="center", fontsize=10)
            bottom = max(bottom, y)
    return bottom + 0.3


def critical_difference_diagram(comparison: Comparison, path_or_ax, *, title: str | None = None):
    """Draw ``comparison``'s critical-difference diagram.

    ``path_or_ax``: a file path (the format from its suffix, e.g. ``.png`` or ``.svg``), a
    sequence of paths (the same figure written to each, e.g. PNG and SVG), or a matplotlib
    ``Axes`` to draw into. Files are written whole or not at all. Returns the figure.
    ``title``: a line above the diagram (e.g. the metric and the number of datasets).
    """
    if not isinstance(comparison, Comparison):
        raise StatsError(f"comparison must be a boostkit.study.stats.Comparison (see compare), "
                         f"got {type(comparison).__name__}")
    require_matplotlib()
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    longest = max(len(f"{name} ({rank:.2f})") for name, rank in comparison.ranking)
    text = longest * _CHAR + 0.35
    k = len(comparison.ranking)
    # The axis takes what the names and the title leave, at least _PER_RANK per rank.
    width = max(2 * text + max(4.0, _PER_RANK * (k - 1)), len(title or "") * 1.1 * _CHAR + 0.4)
    text = max(text, (width - max(4.0, _PER_RANK * (k - 1))) / 2)
    top = 0.35 if title else 0.0

    if isinstance(path_or_ax, Axes):
        ax, paths = path_or_ax, []
        figure = ax.figure
    else:
        single = isinstance(path_or_ax, (str, os.PathLike))
        paths = [path_or_ax] if single else list(path_or_ax) if isinstance(
            path_or_ax, (list, tuple)) else []
        if not paths or not all(isinstance(p, (str, os.PathLike)) for p in paths):
            raise StatsError("path_or_ax must be a path, a sequence of paths or a matplotlib "
                             f"Axes, got {path_or_ax!r}")
        figure = Figure(dpi=100)
        ax = figure.add_axes((0, 0, 1, 1))
    height = _draw(ax, comparison, width, text) + top
    if title:
        ax.text(width / 2, -top + 0.1, title, ha="center", va="top", fontsize=11)
    ax.set_xlim(0, width)
    ax.set_ylim(height - top, -top)
    ax.set_axis_off()
    if paths:
        figure.set_size_inches(width, height)
        for path in map(Path, paths):
            # Into a partial file first, so that a failed write leaves no file behind.
            partial = path.with_name(f".{path.stem}.partial{path.suffix}")
            try:
                save(figure, partial)
                os.replace(partial, path)
            finally:
                partial.unlink(missing_ok=True)
    return figure
