"""The tree learner's faster pieces against naive references (also run with NUMBA_DISABLE_JIT=1):
the screened entropy of the cuts (a lower bound where a cut cannot win, from the Gini bound and
tangents of the entropy's ratio to r (1 - r)), the row split, the
check that a tree's links describe a tree, and whole trees grown with and without the screening
(the same splits, thresholds, gains and leaves, bit for bit)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boostkit
import boostkit_weightboost.trees as trees
from boostkit.criteria import entropy
from boostkit.kernels.histogram import threshold_class_sums
from boostkit_weightboost.kernels import (PRUNE_MARGIN, TANGENTS, _side_tangent_bound, cut_entropy,
                                          describes_tree, entropy_ratio_tangents, fill_rows,
                                          screened_cut_entropy, valid_cuts)


def side_sums(hist):
    wneg = np.empty((hist.shape[0], hist.shape[1] - 1, 2))
    wpos = np.empty_like(wneg)
    threshold_class_sums(hist, wneg, wpos)
    return wpos, wneg


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.floats(0.0, 0.9),
       st.sampled_from([1.0, 1e-160, 1e150]))
def test_screened_entropy_scores_the_cuts_that_can_win_and_bounds_the_others(seed, duplicate,
                                                                              empty, scale):
    rng = np.random.default_rng(seed)
    # Bins without weight of one class or of both (a side may then have no weight at all), and
    # weights so small or large that products of two or three of them leave the normal range.
    hist = scale * rng.exponential(size=(4, 30, 2)) * (rng.random((4, 30, 2)) >= empty)
    if duplicate:
        hist[2] = hist[0]  # cuts of exactly equal entropy
    wpos, wneg = side_sums(hist)
    counts = rng.integers(0, 3, size=(4, 30))
    valid = np.empty((4, 29), dtype=bool)
    valid_cuts(counts, 1, valid)
    out = np.empty((4, 29))
    lowest, bound, scored_cuts, threshold = screened_cut_entropy(wpos, wneg, valid, out)
    full = np.empty((4, 29))
    cut_entropy(wpos, wneg, valid, full)
    exact = np.where(valid, entropy(wpos, wneg), np.inf)

    assert (out[~valid] == np.inf).all()
    if not valid.any():
        assert (lowest, bound, scored_cuts.shape, threshold) == (np.inf, 0.0, (0,), np.inf)
        return
    # The scored cuts are listed in increasing order and hold the kernel's value; every other
    # valid cut's bound is above the threshold (below).
    assert (np.diff(scored_cuts) > 0).all()
    scored = np.zeros(valid.size, dtype=bool)
    scored[scored_cuts] = True
    scored = scored.reshape(valid.shape)
    assert (out[scored] == full[scored]).all()
    skipped = valid & ~scored
    # The scored cuts hold the kernel's value and include every cut near the minimum.
    assert lowest == out[scored].min()
    assert lowest == full[valid].min()
    assert (exact[skipped] > exact[valid].min() * (1.0 + 1e-9)).all()
    # The others: a lower bound of their entropy, above every cut that could win or tie.
    assert (out[skipped] <= exact[skipped] * (1.0 + 1e-14)).all()
    assert (out[skipped] > lowest + 2.0 * bound + PRUNE_MARGIN * abs(lowest)).all()
    assert (out[skipped] > threshold).all()


def test_screened_entropy_skips_most_cuts_of_a_boosted_node():
    # Sides of class ratio near 1/2, as boosting leaves them: the bound is tight and most cuts
    # are left out (what makes the kernel faster than scoring all of them).
    rng = np.random.default_rng(1)
    hist = 1.0 + 0.3 * rng.random((20, 255, 2))
    wpos, wneg = side_sums(hist)
    valid = np.ones((20, 254), dtype=bool)
    out, full = np.empty((20, 254)), np.empty((20, 254))
    _, _, scored, _ = screened_cut_entropy(wpos, wneg, valid, out)
    cut_entropy(wpos, wneg, valid, full)
    assert 0 < scored.shape[0] < 0.2 * valid.size
    assert (out.reshape(-1)[scored] == full.reshape(-1)[scored]).all()


def test_fill_rows_equals_fancy_assignment():
    rng = np.random.default_rng(0)
    rows = np.flatnonzero(rng.random(50) < 0.4)
    out, expected = np.full(50, -1, dtype=np.intp), np.full(50, -1, dtype=np.intp)
    fill_rows(out, rows, 3)
    expected[rows] = 3
    assert out.tolist() == expected.tolist()


def reference_split_rows(codes, rows, cut):
    return rows[codes[rows] <= cut], rows[codes[rows] > cut]


def entropy_ratio(r):
    """phi(r) = h(r) / (r (1 - r)), h the binary entropy in nats."""
    return -(r * np.log(r) + (1.0 - r) * np.log1p(-r)) / (r * (1.0 - r))


def test_the_tangents_are_below_the_entropy_ratio_and_close_to_it():
    value, slope = entropy_ratio_tangents()
    n = TANGENTS
    r = np.concatenate([np.linspace(1e-12, 0.5, 2_000_001),
                        np.random.default_rng(0).random(10**6) / 2, np.arange(n + 1) / (2 * n)])
    r = r[r > 0]
    j = (r * (2 * n)).astype(np.intp)  # the line the kernel picks for r
    line = value[j] + slope[j] * r
    assert (line <= entropy_ratio(r)).all()
    # Also any other tangent (a rounding of r to the neighbouring interval): phi is convex.
    for shift in (-1, 1):
        k = np.clip(j + shift, 0, n)
        assert (value[k] + slope[k] * r <= entropy_ratio(r)).all()
    unbalanced = r >= 0.05
    assert (line[unbalanced] >= entropy_ratio(r[unbalanced]) * (1.0 - 0.004)).all()
    assert value[n] == pytest.approx(4.0 * np.log(2.0), rel=1e-8) and slope[n] == 0.0


def test_a_sides_tangent_bound():
    # W h(r) for a side of class weights (1, 1) is 2 ln 2, for a pure side 0; a share that is
    # NaN (inf / inf) must pick a tangent inside the table, not read outside it.
    assert _side_tangent_bound(1.0, 1.0) == pytest.approx(2.0 * np.log(2.0), rel=1e-8)
    assert _side_tangent_bound(1.0, 1.0) <= 2.0 * np.log(2.0)
    assert _side_tangent_bound(0.0, 3.0) == 0.0 and _side_tangent_bound(0.0, 0.0) == 0.0
    for p, q in ((np.inf, np.inf), (np.nan, 1.0), (1.0, np.nan), (np.inf, 1.0)):
        _side_tangent_bound(p, q)


def test_screened_entropy_scores_few_cuts_of_an_unbalanced_node():
    # Sides of class ratio near 1/5, as in a child node: the Gini bound is loose there (up to
    # 24 % under the entropy), and the tangents keep the scored cuts few.
    rng = np.random.default_rng(2)
    hist = np.stack([4.0 + rng.random((20, 255)), 1.0 + 0.3 * rng.random((20, 255))], axis=-1)
    wpos, wneg = side_sums(hist)
    valid = np.ones((20, 254), dtype=bool)
    out, full = np.empty((20, 254)), np.empty((20, 254))
    _, _, scored, _ = screened_cut_entropy(wpos, wneg, valid, out)
    cut_entropy(wpos, wneg, valid, full)
    gini = 4.0 * np.log(2.0) * (wpos * wneg / (wpos + wneg)).sum(axis=-1)
    assert (gini <= full.min()).sum() > 100 * scored.shape[0]  # what the Gini bound would score
    assert 0 < scored.shape[0] <= 10
    assert full.reshape(-1).argmin() in scored


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 6))
def test_split_rows_equals_the_reference(seed, cut):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 6, size=200).astype(np.uint8)
    rows = np.flatnonzero(rng.random(200) < 0.7)
    left, right = trees.split_rows(codes, rows, cut)
    expected_left, expected_right = reference_split_rows(codes, rows, cut)
    assert left.tolist() == expected_left.tolist()
    assert right.tolist() == expected_right.tolist()


def reference_describes_tree(left, right):
    """The checks DecisionTree made with numpy before the kernel."""
    n_split = left.shape[0]
    if not n_split:
        return True
    children = np.concatenate((left, right))
    parents = np.concatenate((np.arange(n_split), np.arange(n_split)))
    nodes, leaves = children[children >= 0], -1 - children[children < 0]
    return bool((children[children >= 0] > parents[children >= 0]).all()
                and np.array_equal(np.sort(nodes), np.arange(1, n_split))
                and np.array_equal(np.sort(leaves), np.arange(n_split + 1)))


def random_tree(rng, n_split):
    """The links of a random tree: each split node below the root a child of an earlier one,
    the leaves in the remaining places in random order."""
    left, right = np.zeros(n_split, dtype=np.int64), np.zeros(n_split, dtype=np.int64)
    places = [(0, left), (0, right)] if n_split else []
    for node in range(1, n_split):
        parent, side = places.pop(int(rng.integers(len(places))))
        side[parent] = node
        places += [(node, left), (node, right)]
    for (parent, side), leaf in zip(places, rng.permutation(n_split + 1)):
        side[parent] = -1 - leaf
    return left, right


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 5), st.integers(0, 2**32 - 1), st.sampled_from(["none", "left", "right"]))
def test_describes_tree_equals_the_reference(n_split, seed, damage):
    rng = np.random.default_rng(seed)
    left, right = random_tree(rng, n_split)
    assert describes_tree(left, right)
    if damage != "none" and n_split:  # one link changed, which may break the tree
        side = left if damage == "left" else right
        side[int(rng.integers(n_split))] = int(rng.integers(-n_split - 2, n_split + 1))
    assert describes_tree(left, right) == reference_describes_tree(left, right)


def test_a_tree_with_a_link_to_an_earlier_node_is_refused():
    with pytest.raises(ValueError, match="do not describe a tree"):
        trees.DecisionTree([0, 1], [0.0, 0.0], [1, -1], [-2, 0], [1.0, -1.0, 1.0])


def tree_arrays(model):
    return [(h.feature.tobytes(), h.threshold.tobytes(), h.left.tobytes(), h.right.tobytes(),
             h.leaf_scores.tobytes()) for h in model.hypotheses]


def numpy_ln_is_the_c_librarys() -> bool:
    """Whether numpy's float64 ln gives the C library's bits here (not where numpy runs its own
    SIMD ln, as on AVX-512 CPUs)."""
    x = np.random.default_rng(0).random(4096) * 2.0 ** np.arange(-40, 24, 1 / 64)
    return np.log(x).tolist() == [math.log(v) for v in x]


@pytest.mark.parametrize("max_depth, min_samples_leaf", [(2, 2), (3, 1), (3, 40)])
def test_screened_trees_are_the_unscreened_trees_gains_included(monkeypatch, max_depth,
                                                                min_samples_leaf):
    # Whole fits with the one-call entropy search and with best_split scoring every cut with
    # boostkit.criteria.entropy: the same trees and margins, bit for bit, and each split's gain
    # (from the node's own loss, scored in the same call) with examples of initial weight 0
    # (not counted in a leaf's size) and a duplicated feature. The kernel's ln is the C
    # library's: the gains are the same bits where numpy's is too, else within rounding.
    rng = np.random.default_rng(7)
    X = np.round(rng.normal(size=(1200, 5)), 1)
    X[:, 4] = X[:, 3]
    y = np.where(X[:, 0] - X[:, 1] ** 2 + rng.normal(size=1200) > 0, 1, -1)
    sample_weight = rng.exponential(size=1200) * (rng.random(1200) > 0.2)
    recipe = boostkit.Recipe(
        name="entropy-trees", calibration="constant-alpha", reweighting="exponential",
        proposal=("tree", {"max_depth": max_depth, "min_samples_leaf": min_samples_leaf,
                           "criterion": "entropy"}))

    def fit():
        model = boostkit.Booster(recipe, n_rounds=12).fit(X, y, sample_weight=sample_weight)
        gains = np.concatenate([h.split_gains for h in model.hypotheses])
        return tree_arrays(model), model.decision_function(X).tobytes(), gains

    screened = fit()
    monkeypatch.setattr(trees, "_SPLIT_SEARCHES", {})
    unscreened = fit()
    assert unscreened[:2] == screened[:2]
    if numpy_ln_is_the_c_librarys():
        assert unscreened[2].tobytes() == screened[2].tobytes()
    np.testing.assert_allclose(screened[2], unscreened[2], rtol=1e-12)


@pytest.mark.parametrize("min_samples_leaf", [1, 30])
def test_every_leaf_holds_min_samples_leaf_counted_examples(min_samples_leaf):
    # The children's example counts come from their parent's counts per bin: each leaf must
    # still hold at least min_samples_leaf examples of positive initial weight.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(800, 4))
    y = np.where(X[:, 0] + rng.normal(size=800) > 0, 1, -1)
    sample_weight = (rng.random(800) > 0.5).astype(float)
    recipe = boostkit.Recipe(
        name="leafy-trees", calibration="constant-alpha", reweighting="exponential",
        proposal=("tree", {"max_depth": 3, "min_samples_leaf": min_samples_leaf}))
    model = boostkit.Booster(recipe, n_rounds=5).fit(X, y, sample_weight=sample_weight)
    for tree in model.hypotheses:
        sizes = np.bincount(tree.cells(X[sample_weight > 0]), minlength=tree.n_cells)
        assert sizes.min() >= min_samples_leaf
