"""The WeightBoost kernels against naive numpy references (also run with NUMBA_DISABLE_JIT=1)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from boostkit.kernels.boosting import exponential_distribution
from boostkit_weightboost.kernels import (
    ABSOLUTE,
    LOG1P,
    SQUARED,
    eq6_log_bound,
    penalized_distribution,
    penalized_exponential_weights,
    penalized_exponential_weights_parallel,
    regularized_term,
    regularized_values,
    tree_leaves,
)

KINDS = (ABSOLUTE, LOG1P, SQUARED)


def reference_penalty(margin, beta, kind, power):
    if kind == ABSOLUTE:
        return np.abs(beta * margin)
    if kind == LOG1P:
        return power * np.log1p(np.abs(beta * margin))
    return beta * margin ** 2


def reference_weights(margin, y, d1, beta, kind, power):
    """Naive eq. 7 / eq. 11 in long double-free numpy: exponentiate, then normalise."""
    log_w = np.where(d1 > 0, np.log(np.where(d1 > 0, d1, 1.0)) - y * margin
                     - reference_penalty(margin, beta, kind, power), -np.inf)
    w = np.exp(log_w - log_w.max())
    cost = np.sum(d1 * np.exp(-y * margin))
    return w / w.sum(), np.log(cost)


def reference_tree_leaves(X, feature, threshold, left, right):
    out = []
    for x in X:
        node = 0
        while node >= 0:
            node = left[node] if x[feature[node]] <= threshold[node] else right[node]
        out.append(-1 - node)
    return np.array(out)


@st.composite
def margin_problems(draw, scale=10.0):
    n = draw(st.integers(1, 40))
    margin = draw(arrays(np.float64, n, elements=st.floats(-scale, scale)))
    y = draw(arrays(np.float64, n, elements=st.sampled_from([-1.0, 1.0])))
    # Initial weights within 1e100 of each other: wider ratios let D_1(i) e^{e_i - max e} fall
    # below the smallest normal double before normalising, where any max-shifted computation
    # (the kernels', the engine's) keeps fewer digits than the log-space reference.
    d1 = draw(arrays(np.float64, n, elements=st.one_of(st.just(0.0), st.floats(1e-100, 1.0))))
    d1[draw(st.integers(0, n - 1))] = 1.0  # at least one example of positive weight
    return margin, y, d1 / d1.sum()


@given(margin_problems(), st.floats(0.0, 3.0), st.sampled_from(KINDS), st.floats(0.5, 3.0))
@settings(max_examples=60, deadline=None)
def test_penalized_weights_match_the_naive_formula(problem, beta, kind, power):
    margin, y, d1 = problem
    out = np.empty_like(margin)
    log_cost = penalized_exponential_weights(margin, y, d1, beta, kind, power, out)
    expected, expected_log_cost = reference_weights(margin, y, d1, beta, kind, power)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-300)
    assert log_cost == pytest.approx(expected_log_cost, rel=1e-10, abs=1e-10)
    assert out.sum() == pytest.approx(1.0)
    assert (out[d1 == 0] == 0).all()


@given(margin_problems(), st.floats(0.0, 3.0), st.sampled_from(KINDS), st.integers(1, 5))
@settings(max_examples=15, deadline=None)
def test_the_parallel_weights_equal_the_serial_ones(problem, beta, kind, n_chunks):
    margin, y, d1 = problem
    serial, parallel = np.empty_like(margin), np.empty_like(margin)
    a = penalized_exponential_weights(margin, y, d1, beta, kind, 2.0, serial)
    b = penalized_exponential_weights_parallel(margin, y, d1, beta, kind, 2.0, parallel, n_chunks)
    np.testing.assert_allclose(parallel, serial, rtol=1e-12)
    assert b == pytest.approx(a, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_threads_are_used_only_for_enough_examples_per_thread(monkeypatch, kind):
    from boostkit.kernels import blocks

    rng = np.random.default_rng(3)
    margin, y, d1 = rng.normal(size=5000), rng.choice([-1.0, 1.0], 5000), np.full(5000, 1 / 5000)
    serial = penalized_distribution(margin, y, d1, 0.5, kind, 2.0, 1)
    small = penalized_distribution(margin, y, d1, 0.5, kind, 2.0, 2)  # 2 500 a thread: one
    assert np.array_equal(small[0], serial[0]) and small[1] == serial[1]
    monkeypatch.setattr(blocks, "MIN_THREADED_ROWS", 1000)
    threads = penalized_distribution(margin, y, d1, 0.5, kind, 2.0, 2)  # the threaded kernel
    np.testing.assert_allclose(threads[0], serial[0], rtol=1e-12)
    assert threads[1] == pytest.approx(serial[1], rel=1e-12, abs=1e-12)


@given(margin_problems(scale=1e3), st.sampled_from(KINDS), st.integers(1, 4))
@settings(max_examples=15, deadline=None)
def test_beta_zero_is_adaboosts_exponential_reweighting_bit_for_bit(problem, kind, n_jobs):
    margin, y, d1 = problem
    ours, log_cost = penalized_distribution(margin, y, d1, 0.0, kind, 1.0, n_jobs)
    theirs, log_potential = exponential_distribution(margin, y, d1, n_jobs)
    assert np.array_equal(ours, theirs) and log_cost == log_potential


def test_weights_never_overflow_after_thousands_of_rounds():
    margin = np.array([-5000.0, -4000.0, 3000.0, 10.0])
    y = np.array([1.0, 1.0, 1.0, -1.0])
    d1 = np.full(4, 0.25)
    for kind in KINDS:
        out = np.empty(4)
        log_cost = penalized_exponential_weights(margin, y, d1, 0.5, kind, 1.0, out)
        assert np.isfinite(out).all() and out.sum() == pytest.approx(1.0)
        assert log_cost == pytest.approx(5000.0 + np.log(0.25), rel=1e-12)


@given(margin_problems(), st.floats(0.0, 3.0), st.sampled_from(KINDS), st.floats(0.5, 3.0),
       st.floats(0.1, 10.0))
@settings(max_examples=40, deadline=None)
def test_the_factor_and_the_regularized_values(problem, beta, kind, power, scale):
    margin, y, d1 = problem
    values = 0.7 * y
    factor, train_values = np.empty_like(margin), np.empty_like(margin)
    weighted_sum = regularized_term(values, margin, d1, beta, kind, power, factor, train_values)
    np.testing.assert_allclose(factor, np.exp(-reference_penalty(margin, beta, kind, power)), rtol=1e-13)
    assert ((0.0 <= factor) & (factor <= 1.0)).all()
    assert weighted_sum == pytest.approx(np.dot(d1, factor), rel=1e-13)
    assert np.array_equal(train_values, values * factor)
    out = np.empty_like(margin)
    regularized_values(values, margin, beta, kind, power, scale, out)
    assert np.array_equal(out, values * (factor * scale))  # the same numbers at fit and predict
    regularized_values(values, margin, beta, kind, power, 1.0, out)
    assert np.array_equal(out, train_values)


def test_beta_zero_leaves_the_terms_unchanged():
    margin = np.linspace(-50.0, 50.0, 3001)
    values = np.cos(margin)
    factor, train_values, out = np.empty_like(margin), np.empty_like(margin), np.empty_like(margin)
    for kind in KINDS:
        regularized_term(values, margin, np.full(3001, 1 / 3001), 0.0, kind, 1.0, factor, train_values)
        regularized_values(values, margin, 0.0, kind, 1.0, 1.0, out)
        assert (factor == 1.0).all() and np.array_equal(train_values, values)
        assert np.array_equal(out, values)


@given(margin_problems(), arrays(np.float64, 40, elements=st.floats(0.0, 1.0)),
       arrays(np.float64, 40, elements=st.floats(-5.0, 5.0)))
@settings(max_examples=60, deadline=None)
def test_eq6_bound_matches_its_formula_and_bounds_the_cost(problem, factor, values):
    margin, y, d1 = problem
    n = margin.shape[0]
    factor, values = factor[:n], values[:n]
    bound = eq6_log_bound(margin, y, d1, factor, values)
    cost = np.exp(-y * margin)
    expected = np.sum(d1 * cost * ((1 - factor) + factor * np.exp(-y * values)))
    assert bound == pytest.approx(np.log(expected), rel=1e-10, abs=1e-10)
    after = np.sum(d1 * np.exp(-y * (margin + factor * values)))
    assert np.log(after) <= bound + 1e-10  # convexity: exp(g a) <= 1 + (e^a - 1) g for g in [0, 1]


def test_tree_leaves_follow_the_splits():
    # root: x0 <= 0 ? (x1 <= 1 ? leaf 0 : leaf 1) : leaf 2
    feature, threshold = np.array([0, 1]), np.array([0.0, 1.0])
    left, right = np.array([1, -1]), np.array([-3, -2])
    X = np.array([[-1.0, 0.0], [-1.0, 2.0], [0.0, 1.0], [0.5, -9.0]])
    out = np.empty(4, dtype=np.intp)
    tree_leaves(X, feature, threshold, left, right, out)
    assert out.tolist() == [0, 1, 0, 2]


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=30, deadline=None)
def test_tree_leaves_match_the_naive_walk(seed):
    rng = np.random.default_rng(seed)
    # A random tree grown by splitting random leaves.
    feature, threshold, left, right = [], [], [], []
    frontier = [(-1, True)]
    for _ in range(rng.integers(1, 8)):
        parent, is_left = frontier.pop(rng.integers(len(frontier)))
        node = len(feature)
        feature.append(int(rng.integers(3)))
        threshold.append(float(rng.normal()))
        left.append(0)
        right.append(0)
        if parent >= 0:
            (left if is_left else right)[parent] = node
        frontier += [(node, True), (node, False)]
    for leaf, (parent, is_left) in enumerate(frontier):
        (left if is_left else right)[parent] = -1 - leaf
    arrays_ = [np.array(a) for a in (feature, threshold, left, right)]
    X = rng.normal(size=(50, 3))
    out = np.empty(50, dtype=np.intp)
    tree_leaves(X, *arrays_, out)
    assert np.array_equal(out, reference_tree_leaves(X, *arrays_))
    assert set(out) <= set(range(len(frontier)))


def test_eq6_bound_survives_a_zero_factor_on_a_huge_step():
    margin, y, d1 = np.zeros(2), np.array([1.0, 1.0]), np.array([0.5, 0.5])
    # Example 0 has factor 0 and a term whose e^{-y v} overflows: it contributes (1 - 0) + 0.
    bound = eq6_log_bound(margin, y, d1, np.array([0.0, 1.0]), np.array([-800.0, 1.0]))
    assert bound == pytest.approx(np.log(0.5 * 1.0 + 0.5 * np.exp(-1.0)))
