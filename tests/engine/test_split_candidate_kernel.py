"""The candidate kernel of the binned split search (:mod:`boostkit.kernels.splits`).

The kernel's candidates against a naive construction from their definition (every numeric cut
and every prefix of every ordering, in the order of the ties, sides summed bin by bin), and the
search built on it (:func:`boostkit.splits.best_binned_split`) against the block-by-block numpy
search it replaced, kept below as the reference, on random data with missing values and
categorical columns. Runs under ``NUMBA_DISABLE_JIT=1`` too.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boostkit.criteria import MULTICLASS_CRITERIA, gini, weighted_error, z_loss
from boostkit.data import bin_features
from boostkit.kernels.histogram import threshold_pair_sums
from boostkit.kernels.splits import binned_split_candidates
from boostkit.splits import best_binned_split, class_ratio_keys, histogram

# -- the kernel against a naive construction ----------------------------------------------------


def _random_problem(rng, *, c, n_orders, with_missing):
    """Inputs of the kernel as a search sees them: bins past a feature's values empty, some
    empty bins among them, rare categories, orders with the frequent categories first."""
    d = int(rng.integers(1, 6))
    n_hist = int(rng.integers(3, 12))
    missing_bin = n_hist - 1 if with_missing else -1
    n_values = n_hist - 1 if with_missing else n_hist
    n_bins = rng.integers(1, n_values + 1, d).astype(np.int64)
    categorical = rng.random(d) < 0.5
    counts = rng.integers(0, 12, (d, n_hist)).astype(np.int64)
    counts[rng.random((d, n_hist)) < 0.3] = 0
    for f in range(d):
        counts[f, n_bins[f]:n_values] = 0
    if with_missing:
        counts[rng.random(d) < 0.3, missing_bin] = 0  # features without missing values
    hist = rng.random((d, n_hist, c, 2)) * (counts > 0)[:, :, None, None]
    at_most = int(rng.integers(1, 6))
    n_cat = int(n_bins[categorical].max()) if categorical.any() else 1
    orders = np.zeros((int(categorical.sum()), n_orders, n_cat), dtype=np.int64)
    for row, f in enumerate(np.flatnonzero(categorical)):
        for o in range(n_orders):
            keys = np.where(counts[f, :n_cat] >= at_most, rng.random(n_cat), np.inf)
            keys[n_bins[f]:] = np.inf
            orders[row, o] = np.argsort(keys, kind="stable")
    return dict(hist=hist, counts=counts, missing_bin=missing_bin, n_bins=n_bins,
                categorical=categorical, orders=orders, at_least=int(rng.integers(1, 8)),
                at_most=at_most)


def _naive_candidates(hist, counts, missing_bin, n_bins, categorical, orders, at_least,
                      at_most):
    """``[(feature, cut, ordering, direction, neg, pos)]`` from the definition: sides summed
    bin by bin (left in the order of the cut, right from the far end), the missing bin's sums
    added last."""
    d, n_hist, c, _ = hist.shape
    out = []
    row = -1
    for f in range(d):
        n_miss = counts[f, missing_bin] if missing_bin >= 0 else 0
        miss = hist[f, missing_bin] if missing_bin >= 0 else np.zeros((c, 2))
        values = [b for b in range(n_hist) if b != missing_bin]
        if categorical[f]:
            row += 1
            frequent = [b for b in range(n_bins[f]) if counts[f, b] >= at_most]
            rare = [b for b in range(n_bins[f]) if 0 < counts[f, b] < at_most]
            splits = []
            for o in range(orders.shape[1]):
                order = list(orders[row, o, :len(frequent)])
                assert sorted(order) == frequent
                splits += [(i + 1, o, order[:i + 1], order[:i:-1], rare)
                           for i in range(len(order))]
        else:  # the cuts after non-empty bins of values
            splits = [(b, -1, [v for v in values if v <= b], [v for v in values if v > b][::-1],
                       []) for b in range(n_hist - 1) if b != missing_bin and counts[f, b] > 0]
        for cut, ordering, left_bins, right_bins, rare_bins in splits:
            left, right, rare_sum = np.zeros((c, 2)), np.zeros((c, 2)), np.zeros((c, 2))
            for b in left_bins:
                left = left + hist[f, b]
            for b in right_bins:
                right = right + hist[f, b]
            for b in rare_bins:
                rare_sum = rare_sum + hist[f, b]
            right = right + rare_sum if rare_bins else right
            n_left = sum(int(counts[f, b]) for b in left_bins)
            n_right = sum(int(counts[f, b]) for b in right_bins + rare_bins)
            if n_left >= at_least and n_right + n_miss >= at_least:
                out.append((f, cut, ordering, 0, np.stack([left[:, 0], right[:, 0] + miss[:, 0]]),
                            np.stack([left[:, 1], right[:, 1] + miss[:, 1]])))
            if n_miss > 0 and n_left + n_miss >= at_least and n_right >= at_least:
                out.append((f, cut, ordering, 1, np.stack([left[:, 0] + miss[:, 0], right[:, 0]]),
                            np.stack([left[:, 1] + miss[:, 1], right[:, 1]])))
    return out


def _kernel_candidates(problem):
    d, n_hist, c, _ = problem["hist"].shape
    orders = problem["orders"]
    n_max = 2 * d * max(n_hist - 1, orders.shape[1] * orders.shape[2])
    neg, pos = np.full((n_max, 2, c), np.nan), np.full((n_max, 2, c), np.nan)
    meta = np.full((4, n_max), -7, dtype=np.int64)
    n = binned_split_candidates(problem["hist"], problem["counts"], problem["missing_bin"],
                                problem["n_bins"], problem["categorical"], orders,
                                problem["at_least"], problem["at_most"], neg, pos, meta)
    assert np.isnan(neg[n:]).all() and (meta[:, n:] == -7).all()  # nothing past the n written
    return n, neg, pos, meta


@pytest.mark.parametrize("c, n_orders", [(1, 1), (3, 1), (3, 3)])
@pytest.mark.parametrize("with_missing", [False, True])
@pytest.mark.parametrize("seed", range(15))
def test_kernel_candidates_are_the_naive_ones_in_the_order_of_the_ties(c, n_orders,
                                                                        with_missing, seed):
    problem = _random_problem(np.random.default_rng(seed), c=c, n_orders=n_orders,
                              with_missing=with_missing)
    naive = _naive_candidates(**problem)
    n, neg, pos, meta = _kernel_candidates(problem)
    assert n == len(naive)
    for j, (f, cut, ordering, direction, side_neg, side_pos) in enumerate(naive):
        assert tuple(meta[:, j]) == (f, cut, ordering, direction)
        # Bit for bit: the same additions in the same order (prefix and suffix sums).
        assert np.array_equal(neg[j], side_neg) and np.array_equal(pos[j], side_pos)


def test_light_right_sides_are_suffix_sums_not_differences():
    # Bin 0 carries 1e16, bins 1 and 2 carry 1 each: total - left would give the right side of
    # the cut after bin 1 as 0 (1e16 + 2 - (1e16 + 1) rounds), its suffix sum is exactly 1.
    hist = np.zeros((1, 3, 1, 2))
    hist[0, :, 0, 1] = [1e16, 1.0, 1.0]
    problem = dict(hist=hist, counts=np.ones((1, 3), dtype=np.int64), missing_bin=-1,
                   n_bins=np.array([3]), categorical=np.array([False]),
                   orders=np.zeros((0, 1, 1), dtype=np.int64), at_least=1, at_most=1)
    n, neg, pos, meta = _kernel_candidates(problem)
    assert n == 2 and tuple(meta[1, :n]) == (0, 1)
    assert pos[1, 1, 0] == 1.0 and pos[0, 1, 0] == 2.0


def test_only_frequent_categories_are_cut_and_rare_ones_stay_right():
    # Categories 0 (5 examples), 1 (1, rare), 2 (4) ordered 2, 0: prefixes {2} and {2, 0}, the
    # rare category 1 always right with whatever the prefix leaves.
    hist = np.zeros((1, 3, 1, 2))
    hist[0, :, 0, 0] = [5.0, 1.0, 0.0]
    hist[0, :, 0, 1] = [0.0, 0.0, 4.0]
    problem = dict(hist=hist, counts=np.array([[5, 1, 4]]), missing_bin=-1,
                   n_bins=np.array([3]), categorical=np.array([True]),
                   orders=np.array([[[2, 0, 1]]]), at_least=1, at_most=2)
    n, neg, pos, meta = _kernel_candidates(problem)
    assert n == 2 and np.array_equal(meta[:, :n], [[0, 0], [1, 2], [0, 0], [0, 0]])
    assert np.array_equal(neg[:n, :, 0], [[0.0, 6.0], [5.0, 1.0]])
    assert np.array_equal(pos[:n, :, 0], [[4.0, 0.0], [4.0, 0.0]])


def test_missing_values_go_left_only_where_the_feature_has_some():
    hist = np.zeros((2, 3, 1, 2))
    hist[:, :2, 0, 1] = 1.0
    hist[0, 2, 0, 0] = 3.0  # feature 0 has missing values, feature 1 none
    counts = np.array([[1, 1, 3], [1, 1, 0]])
    problem = dict(hist=hist, counts=counts, missing_bin=2, n_bins=np.array([2, 2]),
                   categorical=np.array([False, False]),
                   orders=np.zeros((0, 1, 1), dtype=np.int64), at_least=1, at_most=1)
    n, neg, pos, meta = _kernel_candidates(problem)
    # Feature 0: cut 0 both ways, cut 1 ("all values | missing") with missing values right only
    # (left they would leave the right side empty); feature 1: cut 0, missing values right.
    assert n == 4 and np.array_equal(meta[:, :n], [[0, 0, 0, 1], [0, 0, 1, 0], [-1] * 4,
                                                    [0, 1, 0, 0]])
    assert np.array_equal(neg[1, :, 0], [3.0, 0.0]) and np.array_equal(neg[2, :, 0], [0.0, 3.0])
    assert np.array_equal(pos[3, :, 0], [1.0, 1.0]) and np.array_equal(neg[3, :, 0], [0.0, 0.0])


# -- the search against the numpy search it replaced ---------------------------------------------

def _reference_more_weight_left(wneg, wpos, weight_columns):
    side = wneg + wpos
    if side.ndim == 2:
        side = side[:, :weight_columns].sum(axis=1)
    return bool(side[0] >= side[1])


def _reference_binned_split(hist, counts, loss, binned, *, min_leaf=1, min_category_count=10,
                            category_keys=class_ratio_keys, weight_columns=None):
    """``(feature, bin, loss, wneg, wpos, missing_left, categories)``: the block-by-block numpy
    search (numeric cuts, then every categorical candidate, one loss call per block)."""
    per_class = hist.ndim == 4
    h = hist if per_class else hist[:, :, None, :]
    d, n_hist, n_columns = h.shape[:3]
    at_least = max(int(min_leaf), 1)
    missing = binned.missing_bin
    if missing is None:
        values, value_counts = h, counts
        miss = np.zeros((d, n_columns, 2))
        n_miss = np.zeros(d, dtype=counts.dtype)
    else:
        values, value_counts = h.copy(), counts.copy()
        values[:, missing] = 0.0
        value_counts[:, missing] = 0
        miss, n_miss = h[:, missing], counts[:, missing]

    def scored(neg, pos):
        if not per_class:
            neg, pos = neg[..., 0], pos[..., 0]
        return np.asarray(loss(pos, neg), dtype=np.float64)

    groups = []
    numeric = ~binned.categorical
    if numeric.any():
        wneg = np.empty((d, n_hist - 1, 2, n_columns))
        wpos = np.empty_like(wneg)
        threshold_pair_sums(values, wneg, wpos)
        n_left = np.cumsum(value_counts, axis=1)[:, :-1]
        n_right = value_counts.sum(axis=1, keepdims=True) - n_left
        has_miss = n_miss[:, None]
        cut = numeric[:, None] & (value_counts[:, :-1] > 0)
        valid = np.stack([
            cut & (n_left >= at_least) & (n_right + has_miss >= at_least),
            cut & (has_miss > 0) & (n_left + has_miss >= at_least) & (n_right >= at_least),
        ], axis=2)
        if valid.any():
            cut_feature, cut_bin, cut_direction = np.unravel_index(np.flatnonzero(valid),
                                                                   valid.shape)
            neg, pos = wneg[cut_feature, cut_bin], wpos[cut_feature, cut_bin]
            if missing is not None:
                side = 1 - cut_direction
                at = np.arange(cut_feature.shape[0])
                neg[at, side] += miss[cut_feature, :, 0]
                pos[at, side] += miss[cut_feature, :, 1]

            def rebuild_cut(k):
                return int(cut_bin[k]), cut_direction[k], None, neg[k], pos[k]

            groups.append((cut_feature, scored(neg, pos), rebuild_cut))
    if binned.categorical.any():
        group = _reference_category_candidates(
            np.flatnonzero(binned.categorical), h, counts, miss, n_miss, binned.n_bins, at_least,
            min_category_count, category_keys, per_class, scored)
        if group is not None:
            groups.append(group)
    if not groups:
        return None
    lowest = min(float(scores.min()) for _, scores, _ in groups)
    cutoff = lowest + 1e-12 * abs(lowest)
    best = None
    for features, scores, rebuild in groups:
        tied = np.flatnonzero(scores <= cutoff)
        if tied.shape[0] and (best is None or features[tied[0]] < best[0]):
            best = (int(features[tied[0]]), rebuild, int(tied[0]), float(scores[tied[0]]))
    feature, rebuild, k, score = best
    b, direction, categories, side_neg, side_pos = rebuild(k)
    if not per_class:
        side_neg, side_pos = side_neg[:, 0], side_pos[:, 0]
    missing_left = (bool(direction == 1) if n_miss[feature] > 0
                    else _reference_more_weight_left(side_neg, side_pos, weight_columns))
    return feature, b, score, side_neg.copy(), side_pos.copy(), missing_left, categories


def _reference_category_candidates(features, h, counts, miss, n_miss, n_bins, at_least,
                                   min_category_count, category_keys, per_class, scored):
    k, n_cat = features.shape[0], int(n_bins[features].max())
    sums = h[features, :n_cat].copy()
    n = counts[features, :n_cat].copy()
    beyond = np.arange(n_cat)[None, :] >= n_bins[features][:, None]
    sums[beyond], n[beyond] = 0.0, 0
    sorted_ = n >= max(min_category_count, 1)
    if not sorted_.any():
        return None
    rare = (n > 0) & ~sorted_
    rare_sums = (sums * rare[..., None, None]).sum(axis=1)
    n_rare = (n * rare).sum(axis=1)
    wpos_k, wneg_k = sums[..., 1], sums[..., 0]
    flat = (lambda a: a.reshape(k * n_cat, -1)) if per_class else (lambda a: a.reshape(-1))
    keys = np.atleast_2d(category_keys(flat(wpos_k), flat(wneg_k)))
    keys = np.where(sorted_[None], keys.reshape(-1, k, n_cat), np.inf).transpose(1, 0, 2)
    orders = np.argsort(keys, axis=2, kind="stable")
    rows = np.arange(k)[:, None, None]
    ordered = sums[rows, orders]
    n_sorted = sorted_.sum(axis=1)[:, None, None]
    in_prefix = np.arange(n_cat)[None, None, :] < n_sorted
    ordered *= in_prefix[..., None, None]
    left = np.cumsum(ordered, axis=2)
    right = np.zeros_like(left)
    right[:, :, :-1] = np.cumsum(ordered[:, :, :0:-1], axis=2)[:, :, ::-1]
    right += rare_sums[:, None, None]
    n_left = np.cumsum(n[rows, orders] * in_prefix, axis=2)
    n_right = n_left[:, :, -1:] - n_left + n_rare[:, None, None]
    miss, n_miss = miss[features][:, None, None], n_miss[features][:, None, None]
    cand = np.stack([np.stack([left, right + miss], axis=3),
                     np.stack([left + miss, right], axis=3)], axis=3)
    valid = np.stack([in_prefix & (n_left >= at_least) & (n_right + n_miss >= at_least),
                      in_prefix & (n_miss > 0) & (n_left + n_miss >= at_least)
                      & (n_right >= at_least)], axis=3)
    if not valid.any():
        return None
    f, o, i, direction = np.unravel_index(np.flatnonzero(valid), valid.shape)
    chosen = cand[valid]
    scores = scored(chosen[..., 0], chosen[..., 1])

    def rebuild(c):
        categories = np.sort(orders[f[c], o[c], :i[c] + 1]).astype(np.int64)
        return -1, direction[c], categories, chosen[c, ..., 0], chosen[c, ..., 1]

    return features[f], scores, rebuild


def _mean_keys(wpos, wneg):
    # A second kind of keys (one ordering per column, 0 without weight), like the logit stump's.
    total = wpos + wneg
    return np.divide(wpos - wneg, total, out=np.zeros_like(total), where=total > 0).T


_BINARY_LOSSES = {"error": weighted_error, "z": z_loss, "gini": gini}


@st.composite
def _searches(draw):
    """A random search: data with missing values and categorical columns, a node of it (all
    rows or a subset), binary or per-class weights, a loss and the search's options."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n, d = draw(st.integers(5, 80)), draw(st.integers(1, 5))
    n_categories = np.where(rng.random(d) < 0.5, rng.integers(1, 13, d), 0)
    X = rng.integers(0, draw(st.integers(1, 30)), (n, d)) / 3.0
    for f in np.flatnonzero(n_categories):  # skewed frequencies: rare categories
        k = n_categories[f]
        X[:, f] = rng.choice(k, n, p=rng.dirichlet(np.full(k, 0.5)))
    X[rng.random((n, d)) < draw(st.sampled_from([0.0, 0.1, 0.4]))] = np.nan
    binned = bin_features(X, draw(st.integers(12, 20)),
                          n_categories=n_categories.astype(np.int64))
    node = rng.random(n) < 0.6 if draw(st.booleans()) else np.ones(n, dtype=bool)
    codes = np.ascontiguousarray(binned.codes[:, node])
    counts = np.stack([np.bincount(row, minlength=binned.max_bins) for row in codes])
    # Ties: weights on a coarse grid, so equal losses come up.
    coarse = draw(st.booleans())
    n_classes = draw(st.sampled_from([1, 1, 3]))
    if n_classes == 1:
        w = rng.integers(1, 4, n) / 8.0 if coarse else rng.random(n)
        hist = histogram(codes, w[node], (rng.random(n) < 0.4).astype(np.uint8)[node],
                         binned.max_bins)
        loss = _BINARY_LOSSES[draw(st.sampled_from(sorted(_BINARY_LOSSES)))]
    else:
        w = rng.integers(1, 4, (n, 3)) / 8.0 if coarse else rng.random((n, 3))
        signs = (rng.random((n, 3)) < 0.3).astype(np.uint8)
        hist = histogram(codes, np.ascontiguousarray(w[node]), np.ascontiguousarray(signs[node]),
                         binned.max_bins)
        loss = MULTICLASS_CRITERIA[draw(st.sampled_from(sorted(MULTICLASS_CRITERIA)))]
    options = dict(min_leaf=draw(st.integers(1, 6)), min_category_count=draw(st.integers(1, 8)),
                   category_keys=draw(st.sampled_from([class_ratio_keys, _mean_keys])),
                   weight_columns=draw(st.sampled_from([None, 1])))
    return hist, counts, loss, binned, options


@settings(max_examples=300, deadline=None)
@given(_searches())
def test_the_search_picks_the_reference_search_split(search):
    hist, counts, loss, binned, options = search
    split = best_binned_split(hist, counts, loss, binned, **options)
    reference = _reference_binned_split(hist, counts, loss, binned, **options)
    if reference is None:
        assert split is None
        return
    feature, b, score, wneg, wpos, missing_left, categories = reference
    assert (split.feature, split.bin, split.missing_left) == (feature, b, missing_left)
    if categories is None:
        assert split.categories is None
    else:
        assert np.array_equal(split.categories, categories)
    assert split.loss == pytest.approx(score, rel=1e-12, abs=1e-15)
    assert np.allclose(split.wneg, wneg, rtol=1e-12, atol=1e-15)
    assert np.allclose(split.wpos, wpos, rtol=1e-12, atol=1e-15)
