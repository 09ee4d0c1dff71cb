"""The critical-difference diagram: Demšar's layout (best rank on the right, a bar per clique,
the CD above the axis), every name inside the figure and none over another, PNG and SVG written
whole or not at all."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("scikit_posthocs")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from boostkit.study.cd_diagram import critical_difference_diagram  # noqa: E402
from boostkit.study.stats import ScoreMatrix, StatsError, compare  # noqa: E402

# The ranks of Demšar 2006, Table 6 (see test_stats.py), whose Figure 1(a) this reproduces.
RANKS = np.array([
    [4, 3, 2, 1], [1, 2, 3, 4], [4, 1, 2, 3], [4, 1, 3, 2], [4, 2, 3, 1], [1, 2.5, 4, 2.5],
    [3, 2, 4, 1], [2.5, 2.5, 4, 1], [4, 3, 2, 1], [2.5, 2.5, 2.5, 2.5], [4, 2.5, 1, 2.5],
    [3, 2, 4, 1], [4, 1, 2, 3], [3, 1, 4, 2],
])
NAMES = ("C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf")


def demsar(alpha=0.10):
    matrix = ScoreMatrix(RANKS, [f"d{i}" for i in range(14)], NAMES, "rank", False)
    return compare(matrix, alpha=alpha)


def many(k, n=30, seed=0):
    rng = np.random.default_rng(seed)
    names = [f"{'very-long-algorithm-name-' if j % 3 == 0 else 'alg'}{j}" for j in range(k)]
    values = 0.8 + np.linspace(0, 0.1, k) + rng.normal(0, 0.03, size=(n, k))
    return compare(ScoreMatrix(values, [f"d{i}" for i in range(n)], names))


def drawn(comparison):
    figure = Figure()
    ax = figure.add_subplot()
    critical_difference_diagram(comparison, ax)
    return figure, ax


def test_demsar_figure_1a_layout():
    figure, ax = drawn(demsar())
    texts = {t.get_text(): t.get_position() for t in ax.texts}
    # Rank 1 on the right: the tick labels run 4, 3, 2, 1 from left to right.
    ticks = sorted((texts[str(r)][0], r) for r in range(1, 5))
    assert [r for _, r in ticks] == [4, 3, 2, 1]
    # The better half is named on the right of the axis, the other half on the left.
    right = texts["1"][0]
    assert texts["C4.5+m+cf (1.96)"][0] > right and texts["C4.5+m (2.00)"][0] > right
    assert texts["C4.5 (3.14)"][0] < texts["4"][0] and texts["C4.5+cf (2.89)"][0] < texts["4"][0]
    assert any(text.startswith("CD = 1.12") for text in texts)
    # One thick bar per clique, spanning the ranks of its members.
    bars = [line for line in ax.lines if line.get_linewidth() == 4]
    assert len(bars) == len(demsar().cliques) == 2
    x = {r: texts[str(r)][0] for r in range(1, 5)}
    per_rank = x[1] - x[2]
    for clique, bar in zip(sorted(demsar().cliques, key=lambda c: -dict(demsar().ranking)[c[-1]]),
                           sorted(bars, key=lambda b: min(b.get_xdata()))):
        ranks = [dict(demsar().ranking)[name] for name in clique]
        low, high = sorted(bar.get_xdata())
        assert low < x[4] + (4 - max(ranks)) * per_rank < x[4] + (4 - min(ranks)) * per_rank < high


@pytest.mark.parametrize("k", [3, 8, 15])
def test_names_inside_the_figure_and_apart(tmp_path, k):
    title = (f"average ranks by accuracy on 30 datasets; CD = 1.23 (Nemenyi, alpha = 0.05)"
             if k < 15 else None)
    figure = critical_difference_diagram(many(k), tmp_path / "cd.png", title=title)
    FigureCanvasAgg(figure)
    renderer = figure.canvas.get_renderer()
    page = figure.bbox
    boxes = [t.get_window_extent(renderer) for t in figure.axes[0].texts]
    for box in boxes:
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b), (a, b)
    names = [t for t in figure.axes[0].texts if "(" in t.get_text() and "CD" not in t.get_text()]
    assert len(names) == k


def test_a_long_title_widens_the_figure(tmp_path):
    title = ("average ranks by balanced_accuracy on 14 datasets; CD = 1.12 (Nemenyi, alpha = 0.1); "
             "10-fold cross-validation repeated with 3 seeds")
    figure = critical_difference_diagram(demsar(), tmp_path / "cd.png", title=title)
    FigureCanvasAgg(figure)
    renderer = figure.canvas.get_renderer()
    for text in figure.axes[0].texts:
        box = text.get_window_extent(renderer)
        assert figure.bbox.x0 <= box.x0 and box.x1 <= figure.bbox.x1, text.get_text()


def test_png_and_svg_written(tmp_path):
    paths = [tmp_path / "cd.png", tmp_path / "cd.svg"]
    figure = critical_difference_diagram(demsar(), paths, title="AUC, 14 datasets")
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = paths[1].read_text()
    assert "<svg" in svg
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cd.png", "cd.svg"]
    width, height = figure.get_size_inches()
    assert 5 < width < 12 and 2 < height < 5


def test_bad_input_and_failed_save(tmp_path):
    with pytest.raises(StatsError, match="comparison must be a boostkit.study.stats.Comparison"):
        critical_difference_diagram({"ranks": [1, 2]}, tmp_path / "cd.png")
    with pytest.raises(StatsError, match="path_or_ax must be a path, a sequence of paths"):
        critical_difference_diagram(demsar(), 3)
    with pytest.raises(ValueError, match="xyz"):
        critical_difference_diagram(demsar(), tmp_path / "cd.xyz")
    assert list(tmp_path.iterdir()) == []
