"""11-point interpolated average precision with the tie rule of Wilbur et al. 2005
(eq. 37-38 and the paragraph after them), in boostkit.metrics."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boostkit.metrics import average_precision_11pt


def reference_11pt(y, scores):
    """Rank by rank with exact fractions: a run of g tied scores holding p positives puts p/g
    of a positive at each of its ranks (the paper's rule); IP_R = max{P_r : R_r >= R}."""
    y = np.asarray(y) == 1
    scores = np.asarray(scores, dtype=float)
    n_pos = int(y.sum())
    order = np.argsort(-scores, kind="stable")
    scores, y = scores[order], y[order]
    precision, recall, found, rank, i = [], [], Fraction(0), 0, 0
    while i < len(scores):
        j = i
        while j < len(scores) and scores[j] == scores[i]:
            j += 1
        share = Fraction(int(y[i:j].sum()), j - i)
        for _ in range(j - i):
            rank += 1
            found += share
            precision.append(found / rank)
            recall.append(found / n_pos)
        i = j
    levels = [max(p for p, r in zip(precision, recall) if r >= Fraction(k, 10)) for k in range(11)]
    return float(sum(levels) / 11)


def groups(*runs):
    """Labels and scores for runs of (size, positives), the first run scored highest."""
    y, s = [], []
    for rank, (size, positives) in enumerate(runs):
        y += [1] * positives + [0] * (size - positives)
        s += [float(len(runs) - rank)] * size
    return np.array(y), np.array(s)


def test_table1_ideal_order_gives_0_860():
    # Wilbur et al. 2005, section 4.1: D (99 of 100), C (51), B (50), A (1)
    assert average_precision_11pt(*groups((100, 99), (100, 51), (100, 50), (100, 1))) == pytest.approx(
        0.86036, abs=1e-5)


def test_table2_ideal_and_random_orders():
    # Wilbur et al. 2005, section 4.2: D first, B and C tied, A last: 0.698; all tied:
    # 120/400 = 0.300
    assert average_precision_11pt(*groups((100, 80), (200, 40), (100, 0))) == pytest.approx(0.69848, abs=1e-5)
    y, _ = groups((400, 120))
    assert average_precision_11pt(y, np.zeros(400)) == pytest.approx(0.3, abs=1e-15)


def test_tied_positives_are_spread_over_the_tied_ranks():
    # three positives over ten tied ranks: precision 0.3 at each rank, whatever the order
    y = np.array([1, 1, 1] + [0] * 7)
    assert average_precision_11pt(y, np.zeros(10)) == pytest.approx(0.3)
    shuffled = np.random.default_rng(0).permutation(y)
    assert average_precision_11pt(shuffled, np.zeros(10)) == pytest.approx(0.3)


def test_a_perfect_ranking_scores_one_and_a_reversed_one_less():
    y = np.array([1, 1, 0, 0, 0])
    assert average_precision_11pt(y, np.array([5.0, 4, 3, 2, 1])) == 1.0
    # reversed: positives at ranks 4 and 5 (P = 1/4 at recall 1/2, 2/5 at recall 1), so the
    # interpolated precision is max(1/4, 2/5) = 2/5 at every recall level
    assert average_precision_11pt(y, np.array([1.0, 2, 3, 4, 5])) == pytest.approx(0.4)


def test_labels_in_minus_one_plus_one_and_booleans_agree():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 50)
    s = rng.normal(size=50)
    value = average_precision_11pt(y, s)
    assert average_precision_11pt(2 * y - 1, s) == value
    assert average_precision_11pt(y.astype(bool), s) == value


@pytest.mark.parametrize("y, s, message", [
    (np.zeros(4), np.arange(4.0), "at least one positive"),
    (np.array([0, 1, 0]), np.arange(4.0), "3 labels but scores has 4"),
    (np.array([0, 1]), np.array([np.nan, 1.0]), "NaN or infinite"),
    (np.array([0, 2]), np.array([0.0, 1.0]), "labels in"),
])
def test_bad_input_is_refused(y, s, message):
    with pytest.raises(ValueError, match=message):
        average_precision_11pt(y, s)


ranked = st.integers(1, 60).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 1), min_size=n, max_size=n),
    st.lists(st.integers(0, 6), min_size=n, max_size=n),
)).filter(lambda data: sum(data[0]) > 0)


@settings(max_examples=200, deadline=None)
@given(ranked)
def test_equals_the_rank_by_rank_reference(data):
    y, s = (np.array(a) for a in data)
    assert average_precision_11pt(y, s.astype(float)) == pytest.approx(reference_11pt(y, s), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(ranked, st.randoms(use_true_random=False))
def test_does_not_depend_on_the_order_of_tied_examples(data, random):
    y, s = (np.array(a) for a in data)
    order = list(range(len(y)))
    random.shuffle(order)
    assert average_precision_11pt(y[order], s[order].astype(float)) == pytest.approx(
        average_precision_11pt(y, s.astype(float)), abs=1e-12)
