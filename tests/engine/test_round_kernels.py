"""The per-round kernels against their numpy definitions: the split selection, the cell gather,
the weighted error from cells and the finiteness check."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import boostkit
from boostkit.kernels.boosting import all_finite, cell_sign_error, sign_error, take_cells
from boostkit.criteria import _sum_cells, weighted_error
from boostkit.kernels.splits import first_near_minimum
from boostkit.splits import TIE_TOLERANCE


def numpy_first_near_minimum(scores, valid, tolerance):
    """best_split's selection as it was written in numpy."""
    if not valid.any():
        return -1
    s = np.where(valid, scores, np.inf)
    lowest = s.min()
    return int(np.argmax(s <= lowest + tolerance * abs(lowest)))


SCORES = st.one_of(
    st.floats(-1e3, 1e3),
    st.sampled_from([0.0, -0.0, 1.0, 1.0 + 1e-13, 1.0 - 1e-13, np.inf, -np.inf, np.nan]),
)


@settings(max_examples=300, deadline=None)
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # infinite scores
@given(st.integers(1, 4).flatmap(lambda d: st.integers(1, 6).flatmap(lambda b: st.tuples(
    arrays(np.float64, (d, b), elements=SCORES),
    arrays(np.bool_, (d, b)),
))))
def test_first_near_minimum_is_the_numpy_selection(case):
    scores, valid = case
    with np.errstate(invalid="ignore"):
        expected = numpy_first_near_minimum(scores, valid, TIE_TOLERANCE)
    assert first_near_minimum(scores, valid, TIE_TOLERANCE) == expected


@numba.njit
def two_pass_first_near_minimum(scores, valid, tolerance):
    """first_near_minimum as it was: one pass for the lowest valid score (stopping at a NaN),
    one for the first valid score within the bound."""
    lowest = np.inf
    any_valid = False
    rows, cols = scores.shape
    for f in range(rows):
        for b in range(cols):
            if valid[f, b]:
                any_valid = True
                x = scores[f, b]
                if not x >= lowest:
                    lowest = x
                    if np.isnan(x):
                        return 0
    if not any_valid:
        return -1
    bound = lowest + tolerance * abs(lowest)
    for f in range(rows):
        for b in range(cols):
            if (scores[f, b] if valid[f, b] else np.inf) <= bound:
                return f * cols + b
    return 0


# Ties and near-ties at the tie tolerance around 1 and -1, signed zeros, infinities, NaN.
TIED_SCORES = st.one_of(
    st.floats(-4.0, 4.0, width=16),
    st.sampled_from([0.0, -0.0, 1.0, 1.0 + 1e-12, 1.0 + 2e-12, 1.0 - 1e-13, -1.0,
                     -1.0 + 1e-12, -1.0 + 2e-12, -1.0 - 1e-13, np.inf, -np.inf, np.nan]),
)


@settings(max_examples=1000, deadline=None)
@given(st.integers(0, 5).flatmap(lambda d: st.integers(0, 13).flatmap(lambda b: st.tuples(
    arrays(np.float64, (d, b), elements=TIED_SCORES),
    arrays(np.bool_, (d, b), elements=st.booleans()),
    st.sampled_from([TIE_TOLERANCE, 0.0, 0.5]),
))))
def test_first_near_minimum_is_the_two_pass_selection(case):
    """Every shape from empty (rows of fewer or more than the four running minima), ties,
    near-ties, infinities and NaN, valid or not: the index of the former two passes."""
    scores, valid, tolerance = case
    assert (first_near_minimum(scores, valid, tolerance)
            == two_pass_first_near_minimum(scores, valid, tolerance))


@pytest.mark.parametrize("seed", range(20))
def test_first_near_minimum_is_the_two_pass_selection_at_search_sizes(seed):
    # A round's scores at 10 features x 254 cuts: distinct, or rounded to a few values (ties
    # across rows), with a few masked cuts and sometimes an inf or NaN.
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(10, 254))
    if seed % 2:
        scores = np.round(scores, 1)
    valid = rng.random(scores.shape) < 0.95
    if seed % 5 == 3:
        scores[rng.integers(10), rng.integers(254)] = [np.inf, -np.inf, np.nan][seed % 3]
    for tolerance in (TIE_TOLERANCE, 0.0):
        assert (first_near_minimum(scores, valid, tolerance)
                == two_pass_first_near_minimum(scores, valid, tolerance))


def test_first_near_minimum_by_hand():
    scores = np.array([[3.0, 1.0 + 5e-13, 2.0], [1.0, 0.5, 1.0]])
    valid = np.array([[True, True, True], [True, False, True]])
    # 0.5 is masked; 1 + 5e-13 is within 1e-12 of 1.0 and comes first.
    assert first_near_minimum(scores, valid, TIE_TOLERANCE) == 1
    assert first_near_minimum(scores, valid, 0.0) == 3
    assert first_near_minimum(scores, np.zeros_like(valid), TIE_TOLERANCE) == -1


def test_best_split_refuses_nothing_to_cut_without_scoring():
    def loss(wpos, wneg):  # never asked: there is no cut
        raise AssertionError("scored an empty search")

    hist = np.ones((3, 1, 2))
    assert boostkit.splits.best_split(hist, np.zeros((3, 0), dtype=bool), loss) is None


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 40).flatmap(lambda n: st.tuples(
    arrays(np.uint8, n, elements=st.integers(0, 2)),
    st.sampled_from([np.array([-1.0, 1.0, 1.0]), np.array([1.0, -1.0, 0.5])]),
    arrays(np.float64, n, elements=st.sampled_from([-1.0, 1.0])),
    arrays(np.float64, n, elements=st.floats(0.0, 1.0)),
)))
def test_cell_sign_error_is_sign_error_of_the_gathered_scores(case):
    cells, table, y, w = case
    scores = table[cells]
    eps, bad = sign_error(scores, y, w)
    assert cell_sign_error(cells, table, y, w) == (eps, bad, 0)
    assert np.array_equal(take_cells(table, cells), scores)
    assert np.array_equal(take_cells(table, cells.astype(np.intp)), scores)


def test_cell_sign_error_by_hand_and_cells_outside_the_table():
    cells = np.array([0, 1, 1, 0], dtype=np.uint8)
    table = np.array([-1.0, 1.0])
    y = np.array([-1.0, -1.0, 1.0, 1.0])
    w = np.array([0.1, 0.2, 0.3, 0.4])
    # Wrong: example 1 (h = +1, y = -1) and example 3 (h = -1, y = +1).
    assert cell_sign_error(cells, table, y, w) == (0.2 + 0.4, 0, 0)
    outside = np.array([0, 2, 5, 1], dtype=np.intp)
    assert cell_sign_error(outside, table, y, w)[2] == 2
    assert cell_sign_error(np.array([-1, 0, 1, 0]), table, y, w)[2] == 1
    with pytest.raises(IndexError, match=r"\[0, 5\], outside a table of 2 cells"):
        take_cells(table, outside)
    with pytest.raises(IndexError, match="outside"):
        take_cells(table, np.array([-1, 0]))
    assert take_cells(table, np.zeros(0, dtype=np.uint8)).shape == (0,)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # inf - inf
@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.integers(0, 30), elements=st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.just(1e308))))
def test_all_finite_is_numpy_isfinite_all(a):
    assert all_finite(a) == bool(np.isfinite(a).all())


def test_candidate_scores_come_from_the_cells_when_the_hypothesis_has_a_score_per_cell():
    from boostkit_adaboost.stumps import CategoryStump, Stump

    cells = np.array([1, 0, 1, 1], dtype=np.uint8)
    candidate = boostkit.Candidate(Stump(0, 0.5, np.array([1.0, -1.0])), cells=cells)
    assert np.array_equal(candidate.scores, [-1.0, 1.0, -1.0, -1.0])
    assert candidate.has_cells
    category = CategoryStump(0, np.array([2]), np.array([-1.0, 1.0]))
    assert np.array_equal(category.cell_score_table(), [-1.0, 1.0])
    assert np.array_equal(boostkit.Candidate(category, cells=cells).scores, [1.0, -1.0, 1.0, 1.0])
    assert not boostkit.Candidate(category, scores=np.ones(4)).has_cells


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=0, max_size=2).flatmap(lambda shape: st.tuples(
    arrays(np.float64, (*shape, 2), elements=SCORES),
    arrays(np.float64, (*shape, 2), elements=SCORES),
)))
def test_weighted_error_of_two_cells_is_the_numpy_formula(case):
    wpos, wneg = case
    with np.errstate(invalid="ignore"):
        expected = _sum_cells(np.minimum(wpos, wneg))
        ours = weighted_error(wpos, wneg)
    assert np.shape(ours) == np.shape(expected)
    assert np.array_equal(ours, expected, equal_nan=True)


def serial_threshold_sums(hist):
    """Left prefix and right suffix sums, one feature and one bin at a time."""
    d, n_bins, _ = hist.shape
    wneg, wpos = np.zeros((d, n_bins - 1, 2)), np.zeros((d, n_bins - 1, 2))
    for f in range(d):
        left = [0.0, 0.0]
        for b in range(n_bins - 1):
            left = [left[0] + hist[f, b, 0], left[1] + hist[f, b, 1]]
            wneg[f, b, 0], wpos[f, b, 0] = left
        right = [0.0, 0.0]
        for b in range(n_bins - 1, 0, -1):
            right = [right[0] + hist[f, b, 0], right[1] + hist[f, b, 1]]
            wneg[f, b - 1, 1], wpos[f, b - 1, 1] = right
    return wneg, wpos


@pytest.mark.parametrize("d", [1, 3, 4, 5, 8, 11])
def test_threshold_class_sums_add_each_feature_in_bin_order(d):
    from boostkit.kernels.histogram import threshold_class_sums

    rng = np.random.default_rng(d)
    hist = rng.exponential(size=(d, 37, 2)) * 10.0 ** rng.integers(-8, 8, size=(d, 37, 2))
    wneg, wpos = np.empty((d, 36, 2)), np.empty((d, 36, 2))
    threshold_class_sums(hist, wneg, wpos)
    expected_neg, expected_pos = serial_threshold_sums(hist)
    assert np.array_equal(wneg, expected_neg) and np.array_equal(wpos, expected_pos)


def test_cell_sign_error_in_blocks_is_the_serial_sum_up_to_rounding_for_any_threads():
    from boostkit.kernels.boosting import cell_sign_error_parallel

    rng = np.random.default_rng(0)
    n = 300_000
    cells = (rng.random(n) < 0.4).astype(np.uint8)
    table = np.array([1.0, -1.0])
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    w = rng.exponential(size=n)
    w /= w.sum()
    eps, bad, outside = cell_sign_error(cells, table, y, w)
    two = cell_sign_error_parallel(cells, table, y, w, 2)
    assert two == cell_sign_error_parallel(cells, table, y, w, 3)  # blocks fixed by n
    assert two[1:] == (bad, outside) == (0, 0)
    assert two[0] == pytest.approx(eps, rel=1e-12)


@pytest.mark.parametrize("on_threads", [True, False])
@pytest.mark.parametrize("n_jobs", [2, 3])
def test_margin_update_in_blocks_gives_the_serial_margins_and_errors_to_rounding(
        on_threads, n_jobs, monkeypatch):
    from boostkit.kernels import blocks, boosting
    from boostkit.kernels.blocks import MAX_BLOCKS, MIN_BLOCK_ROWS

    monkeypatch.setattr(blocks, "MIN_THREADED_ROWS", 0 if on_threads else 1 << 62)
    monkeypatch.setattr(blocks, "ADAPTIVE", False)  # threads every call, even where they lose
    n = MAX_BLOCKS * MIN_BLOCK_ROWS + 77
    rng = np.random.default_rng(n_jobs)
    margin = rng.normal(size=n)
    change = np.where(rng.random(n) < 0.1, 0.0, rng.normal(size=n))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    d1 = np.full(n, 1.0 / n)
    w = rng.exponential(size=n)
    w /= w.sum()
    serial = margin.copy()
    train_err, werr, least, finite = boosting.add_contribution(serial, change, y, d1, w)
    before = margin.copy()
    new, blocks_train, blocks_werr, blocks_least, blocks_finite = (
        boosting.add_contribution_blocks(margin, change, y, d1, w, n_jobs))
    assert new.tobytes() == serial.tobytes()  # F_t itself is one addition per example
    # On threads F_t is a new array and F_{t-1} is left alone (a block may run twice).
    assert (new is not margin) == on_threads
    if on_threads:
        assert margin.tobytes() == before.tobytes()
    assert blocks_train == pytest.approx(train_err, rel=1e-12)
    assert blocks_werr == pytest.approx(werr, rel=1e-12)
    assert (blocks_least, blocks_finite) == (least, finite) == ((y * serial).min(), True)
    again = boosting.add_contribution_blocks(before.copy(), change, y, d1, w, 5)
    assert again[1:] == (blocks_train, blocks_werr, blocks_least, blocks_finite)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2,
                    reason="a fit runs on at most NUMBA_NUM_THREADS threads: one here")
def test_a_fit_on_threads_with_new_margins_each_round_is_the_serial_fit_to_rounding(monkeypatch):
    from boostkit.kernels import blocks, boosting

    # Every block on the threads, however small: the margins are then a new array each round.
    monkeypatch.setattr(boosting, "MIN_THREADED_ROWS", 0)
    monkeypatch.setattr(blocks, "MIN_THREADED_ROWS", 0)
    monkeypatch.setattr(blocks, "MIN_THREADED_UPDATES", 0)
    monkeypatch.setattr(blocks, "ADAPTIVE", False)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3 * 8192, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=X.shape[0]) > 0, 1, -1)
    seen = []
    # Every row summed and the margins' pass on threads (a carried round's fused pass, and a
    # compiled batch, run on one thread).
    exact = {"n_rounds": 15, "histogram": "exact", "compiled_rounds": False}
    serial = boostkit.Booster("adaboost", **exact).fit(X, y)
    threads = boostkit.Booster("adaboost", n_jobs=2, **exact,
                               callbacks=[lambda state, record: seen.append(state.margin)]).fit(X, y)
    assert len({id(margin) for margin in seen}) == 15  # a new array every round
    assert [r.hypothesis for r in threads.records] == [r.hypothesis for r in serial.records]
    for a, b in zip(serial.records, threads.records):
        assert b.training_error == pytest.approx(a.training_error, rel=1e-12, abs=1e-15)
        assert b.weighted_error == pytest.approx(a.weighted_error, rel=1e-12, abs=1e-15)
    np.testing.assert_allclose(threads.decision_function(X), serial.decision_function(X),
                               rtol=1e-12, atol=1e-12)


# -- the weighted error of every threshold, summed, scored and chosen in one call ---------------

def numpy_error_cut(hist, valid, tolerance):
    """The search best_split runs for any loss, written with the numpy weighted error:
    (flat index, scores, (wneg, wpos) of the chosen cut)."""
    wneg, wpos = serial_threshold_sums(hist)
    scores = _sum_cells(np.minimum(wpos, wneg))
    k = numpy_first_near_minimum(scores, valid, tolerance)
    if k < 0:
        return k, scores, None
    f, b = divmod(k, hist.shape[1] - 1)
    return k, scores, (wneg[f, b], wpos[f, b])


SUMS = st.one_of(st.floats(0.0, 1e3),
                 st.sampled_from([0.0, 1e-300, 0.25, 0.5, 1.0, np.inf, np.nan]))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 9).flatmap(lambda d: st.integers(2, 7).flatmap(lambda b: st.tuples(
    arrays(np.float64, (d, b, 2), elements=SUMS),
    arrays(np.bool_, (d, b - 1)),
    st.sampled_from([0.0, TIE_TOLERANCE, 0.5]),
))))
def test_lowest_error_cut_is_the_general_search_with_the_weighted_error(case):
    """And so is its form called through Python, compiled only when reached."""
    from boostkit.kernels.splits import lowest_error_cut, lowest_error_cut_when_reached

    hist, valid, tolerance = case
    with np.errstate(invalid="ignore"):
        expected, expected_scores, expected_sides = numpy_error_cut(hist, valid, tolerance)
    for search in (lowest_error_cut, lowest_error_cut_when_reached):
        scores, sides = np.empty(valid.shape), np.empty((2, 2))
        assert search(hist, valid, tolerance, scores, sides) == expected
        assert np.array_equal(scores, expected_scores, equal_nan=True)
        if expected >= 0:
            assert np.array_equal(sides[0], expected_sides[0], equal_nan=True)
            assert np.array_equal(sides[1], expected_sides[1], equal_nan=True)


def test_lowest_error_cut_by_hand():
    from boostkit.kernels.splits import lowest_error_cut

    # Feature 0, bins (neg, pos): (.1, .3) (.2, .0) (.0, .4). Cut after bin 0: left (.1, .3),
    # right (.2, .4): error .1 + .2 = .3; after bin 1: left (.3, .3), right (0, .4): .3 + 0.
    # Feature 1: (.5, 0) (0, .5) (0, 0): cut after bin 0 separates the classes, error 0.
    hist = np.array([[[.1, .3], [.2, .0], [.0, .4]], [[.5, .0], [.0, .5], [.0, .0]]])
    valid = np.ones((2, 2), dtype=bool)
    scores, sides = np.empty((2, 2)), np.empty((2, 2))
    assert lowest_error_cut(hist, valid, TIE_TOLERANCE, scores, sides) == 2
    np.testing.assert_allclose(scores, [[.3, .3], [0.0, 0.5]])
    np.testing.assert_array_equal(sides, [[.5, 0.0], [0.0, .5]])  # (neg, pos) x (left, right)
    valid[1, 0] = False  # masked: feature 0's two cuts tie at .3, the first wins
    assert lowest_error_cut(hist, valid, TIE_TOLERANCE, scores, sides) == 0
    assert lowest_error_cut(hist, np.zeros_like(valid), TIE_TOLERANCE, scores, sides) == -1


def test_best_split_under_the_weighted_error_is_the_split_of_the_general_search():
    from boostkit.criteria import weighted_error

    rng = np.random.default_rng(3)
    hist = rng.exponential(size=(7, 40, 2)) * (rng.random((7, 40, 2)) < 0.8)
    valid = rng.random((7, 39)) < 0.9
    fused = boostkit.splits.best_split(hist, valid, weighted_error)
    general = boostkit.splits.best_split(hist, valid, lambda p, n: weighted_error(p, n))
    assert (fused.feature, fused.bin, fused.loss, fused.missing_left) == (
        general.feature, general.bin, general.loss, general.missing_left)
    assert np.array_equal(fused.wneg, general.wneg) and np.array_equal(fused.wpos, general.wpos)


MARGINS = st.one_of(st.floats(-50, 50), st.sampled_from([0.0, -0.0, 1e-300, -1e-300, 30.0, -30.0]))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.tuples(
    arrays(np.float64, n, elements=MARGINS),
    arrays(np.float64, n, elements=st.sampled_from([0.0, -0.0, 0.5, -1.25, 3.0])),
    arrays(np.float64, n, elements=st.sampled_from([-1.0, 1.0])),
    arrays(np.float64, n, elements=st.sampled_from([0.0, 0.25, 1.0, 2.0])),
)))
def test_the_least_margin_of_the_update_shifts_the_exponential_weights_bit_for_bit(case):
    from boostkit.kernels import boosting

    margin, change, y, d1 = case
    w = np.full(margin.shape, 1.0 / margin.shape[0])
    _, _, least, finite = boosting.add_contribution(margin, change, y, d1, w)
    assert finite
    counted = d1 > 0
    assert least == ((y * margin)[counted].min() if counted.any() else np.inf)
    # Its negation is the largest exponent the weights subtract: the same weights, bit for bit.
    expected, shifted = np.empty_like(margin), np.empty_like(margin)
    with np.errstate(all="ignore"):  # no D_1 > 0: weights 0/0, the same NaN both ways
        log_potential = boosting.exponential_weights(margin, y, d1, expected)
        assert boosting.shifted_exponential_weights(margin, y, d1, -least, shifted) == \
            pytest.approx(log_potential, rel=0, abs=0, nan_ok=True)
    assert shifted.tobytes() == expected.tobytes()
    # And through the entry point, serial or in blocks.
    for n_jobs in (1, 3):
        weights, potential = boosting.exponential_distribution(margin, y, d1, n_jobs, least)
        if counted.any():
            assert weights.tobytes() == expected.tobytes() and potential == log_potential


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_the_margin_update_finds_a_contribution_that_is_not_finite(bad):
    from boostkit.kernels import boosting

    margin, y, d1 = np.zeros(5), np.ones(5), np.full(5, 0.2)
    assert boosting.add_contribution(margin, np.array([0.5, -1.0, 0.0, 1.0, 2.0]), y, d1, d1)[3]
    assert not boosting.add_contribution(margin, np.array([0.5, bad, 0.0, 1.0, 2.0]), y, d1,
                                         d1)[3]

