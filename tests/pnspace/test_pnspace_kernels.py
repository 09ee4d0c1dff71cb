"""The plugin's kernels against naive references; also run with NUMBA_DISABLE_JIT=1.

AOC* against a loop over all pairs (Scholz 2006 Definition 3); the odds and the weight after
reweighting against the formulas of eq. 2 and Fig. 3 written out in numpy.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from boostkit.metrics import roc_auc
from boostkit_pnspace import cell_odds, stratify, total_weight_after
from boostkit_pnspace.kernels import aoc_star


def naive_aoc_star(scores, is_pos, weights):
    """Definition 3 literally: every (positive, negative) pair, ties counting half."""
    total = 0.0
    for i in np.flatnonzero(is_pos):
        for j in np.flatnonzero(~is_pos.astype(bool)):
            if scores[j] > scores[i]:
                total += weights[i] * weights[j]
            elif scores[j] == scores[i]:
                total += 0.5 * weights[i] * weights[j]
    return total


def kernel_aoc_star(scores, is_pos, weights):
    return aoc_star(scores, is_pos.astype(np.uint8), weights, np.argsort(scores, kind="stable"))


def test_hand_computed_pairs():
    # positives at 1 and 2, negatives at 2 and 3: (1,2) (1,3) (2,3) misranked, (2,2) a tie.
    scores = np.array([1.0, 2.0, 2.0, 3.0])
    is_pos = np.array([1, 0, 1, 0], dtype=np.uint8)
    assert kernel_aoc_star(scores, is_pos, np.ones(4)) == 3.5
    # a pair counts w+ w-: (1,2): 1*3, (1,3): 1*5, the tie: half of 2*3, (2,3): 2*5.
    weights = np.array([1.0, 3.0, 2.0, 5.0])
    assert kernel_aoc_star(scores, is_pos, weights) == 1 * 3 + 1 * 5 + 0.5 * 2 * 3 + 2 * 5


def test_one_class_and_perfect_ranking_give_zero():
    scores = np.array([0.0, 1.0, 2.0])
    assert kernel_aoc_star(scores, np.array([0, 0, 0], np.uint8), np.ones(3)) == 0.0
    assert kernel_aoc_star(scores, np.array([0, 1, 1], np.uint8), np.ones(3)) == 0.0


@st.composite
def scored_sets(draw):
    n = draw(st.integers(1, 40))
    scores = draw(arrays(np.float64, n, elements=st.sampled_from([-1.0, 0.0, 0.5, 2.0, 7.0])))
    is_pos = draw(arrays(np.uint8, n, elements=st.sampled_from([0, 1])))
    # zero or normal-sized: subnormal products would only test float underflow
    weights = draw(arrays(np.float64, n, elements=st.one_of(st.just(0.0), st.floats(1e-3, 10.0))))
    return scores, is_pos, weights


@given(scored_sets())
@settings(max_examples=100, deadline=None)
def test_kernel_matches_the_pair_loop(data):
    scores, is_pos, weights = data
    assert kernel_aoc_star(scores, is_pos, weights) == pytest.approx(
        naive_aoc_star(scores, is_pos, weights), rel=1e-12, abs=1e-12)


@given(scored_sets())
@settings(max_examples=50, deadline=None)
def test_kernel_is_one_minus_auc_times_the_area(data):
    scores, is_pos, weights = data
    pos, neg = weights[is_pos == 1].sum(), weights[is_pos == 0].sum()
    if pos == 0 or neg == 0:
        return
    auc = roc_auc(np.where(is_pos == 1, 1, -1), scores, sample_weight=weights)
    assert kernel_aoc_star(scores, is_pos, weights) == pytest.approx(
        (1 - auc) * pos * neg, rel=1e-9, abs=1e-9 * pos * neg)


@given(scored_sets(), st.floats(1e-3, 1e3))
@settings(max_examples=50, deadline=None)
def test_stratification_leaves_aoc_star_unchanged(data, c):
    """Section 2: skewing with P N preserved keeps AOC* (each pair's w+ w- is unchanged)."""
    scores, is_pos, weights = data
    skewed = stratify(weights, np.where(is_pos == 1, 1, -1), c)
    assert kernel_aoc_star(scores, is_pos, skewed) == pytest.approx(
        kernel_aoc_star(scores, is_pos, weights), rel=1e-12, abs=1e-12)


def naive_odds(wpos, wneg, smoothing, m, n_examples):
    """beta'_j = (W+_j s + a) / (W-_j s + b), s = |E| / W, floored at 1e-15 |E|."""
    total_pos = wpos.sum(axis=-1, keepdims=True)
    total = total_pos + wneg.sum(axis=-1, keepdims=True)
    scale = n_examples / total
    prior_pos, prior_neg = {
        "none": (0.0, 0.0),
        "laplace": (1.0, 1.0),
        "m-estimate": (m * total_pos / total, m * (1 - total_pos / total)),
    }[smoothing]
    floor = 1e-15 * n_examples
    return (np.maximum(wpos * scale + prior_pos, floor)
            / np.maximum(wneg * scale + prior_neg, floor))


@given(st.integers(1, 4), st.integers(1, 6), st.integers(1, 3),
       st.sampled_from(["none", "laplace", "m-estimate"]), st.floats(0.1, 10.0),
       st.integers(1, 1000), st.integers(0, 2 ** 32 - 1))
@settings(max_examples=100, deadline=None)
def test_odds_and_weight_after_match_the_formulas(d, b, k, smoothing, m, n_examples, seed):
    rng = np.random.default_rng(seed)
    wpos, wneg = rng.random((d, b, k)), rng.random((d, b, k))
    wpos[rng.random((d, b, k)) < 0.3] = 0.0  # pure and empty cells
    wneg[..., 0] += 1e-3  # every partition holds some weight
    odds = naive_odds(wpos, wneg, smoothing, m, n_examples)
    assert cell_odds(wpos, wneg, smoothing, m, n_examples) == pytest.approx(odds, rel=1e-12)
    root = np.sqrt(odds)
    assert total_weight_after(wpos, wneg, smoothing, m, n_examples) == pytest.approx(
        (wpos / root + wneg * root).sum(axis=-1), rel=1e-12)
