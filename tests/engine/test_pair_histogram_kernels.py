"""The multiclass pair kernels (boostkit.kernels.histogram, the carried histogram's and the Z
search's; C > 1 margin columns) against naive numpy references. Kernels are called directly;
sizes are small so that the file also runs under ``NUMBA_DISABLE_JIT=1`` (CI does)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from boostkit.criteria import MULTICLASS_CRITERIA
from boostkit.kernels import histogram as kh
from boostkit.kernels.carried import changed_pair_histogram
from boostkit.kernels.histogram import (
    cell_pair_sums,
    pair_histogram,
    pair_histogram_parallel,
    split_pair_weights,
    threshold_pair_sums,
)
from boostkit.kernels.splits import pair_z_scores
from boostkit.splits import best_split, histogram, valid_splits

# Serially (None) and on 1 to 7 threads (in blocks of examples; these small inputs are one
# block, tests/engine/test_block_kernels.py has many).
N_CHUNKS = [None, 1, 2, 3, 7]
# Both loops of pair_histogram: class by class (C <= _CLASS_BY_CLASS_MAX_C) and row by row.
CLASSES = [1, 2, 3, kh._CLASS_BY_CLASS_MAX_C, kh._CLASS_BY_CLASS_MAX_C + 1, 7]


# -- naive references ---------------------------------------------------------------------------


def reference_split(weights, is_pos):
    pos = is_pos.astype(bool)
    return np.stack([np.where(pos, 0.0, weights), np.where(pos, weights, 0.0)], axis=-1)


def reference_pair_histogram(codes, signed, n_bins):
    d, n = codes.shape
    c = signed.shape[1]
    out = np.zeros((d, n_bins, c, 2))
    classes = np.broadcast_to(np.arange(c), (n, c))
    for f in range(d):
        bins = np.broadcast_to(codes[f][:, None], (n, c))
        for s in range(2):
            np.add.at(out[f], (bins, classes, s), signed[:, :, s])
    return out


def random_pairs(n, d, c, n_bins, seed=0, multilabel=False):
    """Binned codes leaving the top bins unused, weights with zeros, and signs: one positive
    class per example (single-label), or any number of them."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, max(1, n_bins - 3), size=(d, n)).astype(np.uint8)
    weights = rng.exponential(size=(n, c))
    weights[rng.random((n, c)) < 0.1] = 0.0
    weights[: min(n, 5)] = 0.0  # whole examples of weight 0
    if multilabel:
        is_pos = (rng.random((n, c)) < 0.4).astype(np.uint8)
    else:
        is_pos = np.zeros((n, c), dtype=np.uint8)
        is_pos[np.arange(n), rng.integers(0, c, n)] = 1
    return codes, weights, is_pos


def run_pair_histogram(codes, signed, n_bins, n_chunks):
    out = np.full((codes.shape[0], n_bins, signed.shape[1], 2), np.nan)  # stale contents
    if n_chunks is None:
        pair_histogram(codes, signed, out)
    else:
        pair_histogram_parallel(codes, signed, out, n_chunks)
    return out


# -- split_pair_weights -------------------------------------------------------------------------


@pytest.mark.parametrize("c", [1, 2, 7])
def test_split_pair_weights_matches_reference(c):
    _, weights, is_pos = random_pairs(300, 1, c, 4, seed=c, multilabel=True)
    signed = np.full(weights.shape + (2,), np.nan)
    split_pair_weights(weights, is_pos, signed)
    np.testing.assert_array_equal(signed, reference_split(weights, is_pos))


# -- pair histograms ----------------------------------------------------------------------------


@pytest.mark.parametrize("n_chunks", N_CHUNKS)
@pytest.mark.parametrize("c", CLASSES)
@pytest.mark.parametrize("multilabel", [False, True])
def test_pair_histogram_matches_reference(c, n_chunks, multilabel):
    n_bins = 20
    codes, weights, is_pos = random_pairs(1001, 5, c, n_bins, seed=c, multilabel=multilabel)
    signed = reference_split(weights, is_pos)
    out = run_pair_histogram(codes, signed, n_bins, n_chunks)
    np.testing.assert_allclose(out, reference_pair_histogram(codes, signed, n_bins),
                               rtol=1e-12, atol=0)
    assert (out[:, n_bins - 3:] == 0.0).all()  # unused bins stay empty


@pytest.mark.parametrize("n_chunks", N_CHUNKS)
@pytest.mark.parametrize("c", [2, kh._CLASS_BY_CLASS_MAX_C + 1])
def test_pair_histogram_of_arbitrary_signed_weights(c, n_chunks):
    # Pairs with two non-zero signed weights are not split_pair_weights' output, but the kernels
    # still sum each sign on its own (the class-by-class loop hands such data to the other one).
    codes, weights, is_pos = random_pairs(400, 3, c, 9, seed=3)
    signed = reference_split(weights, is_pos)
    signed[::7, :, 0] += 0.25
    out = run_pair_histogram(codes, signed, 9, n_chunks)
    np.testing.assert_allclose(out, reference_pair_histogram(codes, signed, 9), rtol=1e-12, atol=0)


@pytest.mark.parametrize("n_chunks", N_CHUNKS)
def test_pair_histogram_over_several_row_blocks(n_chunks):
    # The row-by-row loop copies blocks of _ROW_BLOCK examples: n spans two and a part.
    c = kh._CLASS_BY_CLASS_MAX_C + 1
    n = 2 * kh._ROW_BLOCK + 301
    codes, weights, is_pos = random_pairs(n, 3, c, 16, seed=4)
    signed = reference_split(weights, is_pos)
    out = run_pair_histogram(codes, signed, 16, n_chunks)
    np.testing.assert_allclose(out, reference_pair_histogram(codes, signed, 16), rtol=1e-12, atol=0)


@pytest.mark.parametrize("c", [1, 3, kh._CLASS_BY_CLASS_MAX_C + 1])
def test_pair_histogram_of_no_examples_and_more_blocks_than_examples(c):
    codes, weights, is_pos = random_pairs(3, 2, c, 5, seed=5)
    signed = reference_split(weights, is_pos)
    expected = reference_pair_histogram(codes, signed, 5)
    np.testing.assert_allclose(run_pair_histogram(codes, signed, 5, 7), expected, rtol=1e-12)
    empty = np.zeros((0, c, 2))
    for n_chunks in (None, 2):
        out = run_pair_histogram(codes[:, :0], empty, 5, n_chunks)
        assert (out == 0.0).all()


@pytest.mark.parametrize("c", [2, 5])
def test_both_loops_give_the_same_numbers(c):
    # The class-by-class and the row-by-row loop add each pair to its cell in example order: the
    # choice between them, made on C alone, never changes a histogram.
    n_bins = 11
    codes, weights, is_pos = random_pairs(700, 3, c, n_bins, seed=6, multilabel=True)
    signed = reference_split(weights, is_pos)
    d, n = codes.shape
    weights_t, is_pos_t = np.empty((c, n)), np.empty((c, n), dtype=np.uint8)
    assert kh._split_by_class(signed, weights_t, is_pos_t, 0, n)
    by_class = np.full((c, d, n_bins, 2), np.nan)  # overwritten
    kh._fill_class_rows(codes, weights_t, is_pos_t, by_class, 0, n)
    out_class = np.empty((d, n_bins, c, 2))
    kh._class_hist_to_out(by_class, out_class)
    by_row = np.zeros((d, n_bins, kh._row_width(c)))
    kh._accumulate_signed_rows(codes, signed, by_row, 0, n)
    out_row = np.empty((d, n_bins, c, 2))
    kh._signed_hist_to_out(by_row, out_row)
    np.testing.assert_array_equal(out_class, out_row)
    out = np.empty_like(out_row)
    pair_histogram(codes, signed, out)
    np.testing.assert_array_equal(out, out_row)


@pytest.mark.parametrize("c", [3, kh._CLASS_BY_CLASS_MAX_C + 1])
def test_parallel_sums_are_deterministic_and_one_block_is_the_serial_kernel(c):
    codes, weights, is_pos = random_pairs(1500, 4, c, 30, seed=7)
    signed = reference_split(weights, is_pos)
    serial = run_pair_histogram(codes, signed, 30, None)
    np.testing.assert_array_equal(run_pair_histogram(codes, signed, 30, 1), serial)
    for n_chunks in (2, 5):
        first = run_pair_histogram(codes, signed, 30, n_chunks)
        for _ in range(3):
            np.testing.assert_array_equal(run_pair_histogram(codes, signed, 30, n_chunks), first)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), c=st.integers(1, 7), n=st.integers(0, 60), d=st.integers(1, 3),
       n_bins=st.integers(1, 8), n_chunks=st.sampled_from(N_CHUNKS))
def test_bin_sums_are_the_class_totals(data, c, n, d, n_bins, n_chunks):
    codes = data.draw(hnp.arrays(np.uint8, (d, n), elements=st.integers(0, n_bins - 1)))
    weights = data.draw(hnp.arrays(np.float64, (n, c), elements=st.one_of(
        st.just(0.0), st.floats(1e-300, 1e300), st.floats(0.0, 1.0))))
    is_pos = data.draw(hnp.arrays(np.uint8, (n, c), elements=st.integers(0, 1)))
    signed = np.empty((n, c, 2))
    split_pair_weights(weights, is_pos, signed)
    out = run_pair_histogram(codes, signed, n_bins, n_chunks)
    totals = signed.sum(axis=0)  # (C, 2): every feature's bins hold every pair once
    scale = np.abs(signed).sum(axis=0)
    for f in range(d):
        assert (np.abs(out[f].sum(axis=0) - totals) <= 1e-12 * scale).all()


# -- threshold and cell sums --------------------------------------------------------------------


@pytest.mark.parametrize("c", [1, 2, 7])
def test_threshold_pair_sums_match_reference(c):
    codes, weights, is_pos = random_pairs(500, 3, c, 12, seed=8)
    hist = reference_pair_histogram(codes, reference_split(weights, is_pos), 12)
    wneg = np.full((3, 11, 2, c), np.nan)
    wpos = np.full_like(wneg, np.nan)
    threshold_pair_sums(hist, wneg, wpos)
    for s, sums in ((0, wneg), (1, wpos)):
        per_bin = hist[..., s]  # (d, B, C)
        left = np.cumsum(per_bin, axis=1)[:, :-1]
        right = np.cumsum(per_bin[:, ::-1], axis=1)[:, ::-1][:, 1:]
        np.testing.assert_allclose(sums[:, :, 0], left, rtol=1e-12, atol=0)
        np.testing.assert_allclose(sums[:, :, 1], right, rtol=1e-12, atol=0)
        # Both sides of every cut hold all the class's weight.
        np.testing.assert_allclose(sums[:, :, 0] + sums[:, :, 1],
                                   np.broadcast_to(per_bin.sum(axis=1)[:, None], left.shape),
                                   rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(hist=hnp.arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(2, 9),
                                             st.integers(1, 5), st.just(2)),
                       elements=st.floats(0.0, 1e6)))
def test_threshold_sides_add_up_to_the_totals(hist):
    d, n_bins, c, _ = hist.shape
    wneg = np.empty((d, n_bins - 1, 2, c))
    wpos = np.empty_like(wneg)
    threshold_pair_sums(hist, wneg, wpos)
    for s, sums in ((0, wneg), (1, wpos)):
        total = hist[..., s].sum(axis=1)[:, None, :]  # (d, 1, C)
        assert np.allclose(sums[:, :, 0] + sums[:, :, 1], total, rtol=1e-12, atol=0)
        # The left side grows and the right side shrinks with the threshold.
        assert (np.diff(sums[:, :, 0], axis=1) >= 0).all()
        assert (np.diff(sums[:, :, 1], axis=1) <= 0).all()


@pytest.mark.parametrize("c", [1, 3])
def test_cell_pair_sums_match_reference(c):
    rng = np.random.default_rng(9)
    n_cells = 5
    _, weights, is_pos = random_pairs(400, 1, c, 4, seed=9, multilabel=True)
    cells = rng.integers(0, n_cells - 1, size=400)  # the last cell stays empty
    wneg, wpos = cell_pair_sums(cells, weights, is_pos, n_cells)
    pos = is_pos.astype(bool)
    for l in range(c):
        np.testing.assert_allclose(
            wpos[:, l], np.bincount(cells[pos[:, l]], weights[pos[:, l], l], minlength=n_cells),
            rtol=1e-12)
        np.testing.assert_allclose(
            wneg[:, l], np.bincount(cells[~pos[:, l]], weights[~pos[:, l], l], minlength=n_cells),
            rtol=1e-12)
    assert (wneg[-1] == 0.0).all() and (wpos[-1] == 0.0).all()


# -- changed_pair_histogram (boostkit.kernels.carried) ------------------------------------------


def reference_changed_pair_histogram(codes, rows, change, is_pos, n_bins):
    return reference_pair_histogram(codes[:, rows], reference_split(change, is_pos), n_bins)


@pytest.mark.parametrize("c", [1, 3, 10])
@pytest.mark.parametrize("multilabel", [False, True])
def test_changed_pair_histogram_matches_reference(c, multilabel):
    codes, change, is_pos = random_pairs(400, 5, c, 256, seed=c, multilabel=multilabel)
    change -= 0.5  # the changes of weight have either sign
    rng = np.random.default_rng(c)
    rows = np.flatnonzero(rng.random(400) < 0.3).astype(np.uintp)
    out = np.full((5, 255, c, 2), np.nan)  # stale contents; codes up to 252
    changed_pair_histogram(codes, rows, change[rows], is_pos[rows], out)
    want = reference_changed_pair_histogram(codes, rows, change[rows], is_pos[rows], 255)
    np.testing.assert_allclose(out, want, rtol=1e-13, atol=1e-13)
    # The rows summed in increasing order: the engine's histogram of the gathered rows' codes.
    np.testing.assert_array_equal(
        out, histogram(np.ascontiguousarray(codes[:, rows]), change[rows], is_pos[rows], 255))


@settings(max_examples=40, deadline=None)
@given(data=st.data(), c=st.integers(1, 6), n=st.integers(0, 50), d=st.integers(1, 3),
       n_bins=st.integers(1, 256))
def test_changed_pair_histogram_sums_every_gathered_pair_once(data, c, n, d, n_bins):
    codes = data.draw(hnp.arrays(np.uint8, (d, n), elements=st.integers(0, n_bins - 1)))
    rows = np.flatnonzero(data.draw(hnp.arrays(np.bool_, n))).astype(np.uintp)
    m = rows.shape[0]
    change = data.draw(hnp.arrays(np.float64, (m, c), elements=st.floats(-8, 8, width=16)))
    is_pos = data.draw(hnp.arrays(np.uint8, (m, c), elements=st.integers(0, 1)))
    out = np.full((d, n_bins, c, 2), np.nan)
    changed_pair_histogram(codes, rows, change, is_pos, out)
    # Half-precision values: every sum exact, so the reference's order does not matter.
    np.testing.assert_array_equal(
        out, reference_changed_pair_histogram(codes, rows, change, is_pos, n_bins))


# -- the pair Z search (boostkit.kernels.splits.pair_z_scores, boostkit.splits.best_split) -----


def reference_pair_z(hist):
    """Every cut's 2 sum_{side, l} sqrt(W+ W-), from numpy's cumulative sums."""
    left = np.cumsum(hist, axis=1)[:, :-1]  # (d, B - 1, C, 2)
    right = np.cumsum(hist[:, ::-1], axis=1)[:, ::-1][:, 1:]
    return 2.0 * (np.sqrt(left[..., 0] * left[..., 1]).sum(axis=-1)
                  + np.sqrt(right[..., 0] * right[..., 1]).sum(axis=-1))


@pytest.mark.parametrize("c", [1, 3, 10])
def test_pair_z_scores_match_reference_and_the_criterion(c):
    codes, weights, is_pos = random_pairs(600, 4, c, 30, seed=c)
    hist = reference_pair_histogram(codes, reference_split(weights, is_pos), 30)
    scores = np.full((4, 29), np.nan)
    pair_z_scores(hist, scores)
    np.testing.assert_allclose(scores, reference_pair_z(hist), rtol=1e-13, atol=1e-300)
    # The criterion the search recognises, on the threshold sides, to a few ulps.
    wneg = np.empty((4, 29, 2, c))
    wpos = np.empty_like(wneg)
    threshold_pair_sums(hist, wneg, wpos)
    np.testing.assert_allclose(scores, MULTICLASS_CRITERIA["z"](wpos, wneg), rtol=1e-14)


@settings(max_examples=40, deadline=None)
@given(hist=hnp.arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(2, 9),
                                             st.integers(1, 5), st.just(2)),
                       elements=st.floats(0.0, 1e6)))
def test_pair_z_scores_of_any_histogram(hist):
    d, n_bins = hist.shape[:2]
    scores = np.empty((d, n_bins - 1))
    pair_z_scores(hist, scores)
    np.testing.assert_allclose(scores, reference_pair_z(hist), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("c", [2, 10])
@pytest.mark.parametrize("weight_columns", [None, 1])
def test_the_compiled_pair_z_search_finds_the_numpy_searchs_split(c, weight_columns):
    codes, weights, is_pos = random_pairs(800, 6, c, 20, seed=10 + c)
    hist = reference_pair_histogram(codes, reference_split(weights, is_pos), 20)
    counts = np.stack([np.bincount(row, minlength=20) for row in codes])
    valid = valid_splits(counts)
    valid[2, 3] = False  # a masked cut
    z = MULTICLASS_CRITERIA["z"]
    compiled = best_split(hist, valid, z, weight_columns=weight_columns)
    generic = best_split(hist, valid, lambda wpos, wneg: z(wpos, wneg),  # not recognised
                         weight_columns=weight_columns)
    assert (compiled.feature, compiled.bin, compiled.missing_left) == (
        generic.feature, generic.bin, generic.missing_left)
    assert compiled.loss == pytest.approx(generic.loss, rel=1e-14)
    np.testing.assert_array_equal(compiled.wneg, generic.wneg)
    np.testing.assert_array_equal(compiled.wpos, generic.wpos)
    # Ties go to the lowest feature: a copy of the best feature placed first wins.
    twice = np.concatenate([hist[compiled.feature:compiled.feature + 1], hist])
    valid_twice = np.concatenate([valid[compiled.feature:compiled.feature + 1], valid])
    assert best_split(twice, valid_twice, z).feature == 0
    # No valid cut: no split.
    assert best_split(hist, np.zeros_like(valid), z) is None
