"""Term-presence stumps (BoosTexter's weak learner, Schapire & Singer 2000): ``term-stump``.

* the per-term cell sums on a tiny CSR matrix, worked out by hand, binary and multiclass;
* the numba kernel against a plain numpy version, and the per-class cell sums adding up to the
  class totals, on random sparse matrices (hypothesis);
* on 0/1 features the term learner chooses what the dense ``stump`` learner chooses (a stump at
  threshold 0.5 is term presence), round after round;
* fitting and predicting never densify a sparse X, and a sparse fit is the dense fit;
* the hypothesis reads every sparse format, duplicates and stored zeros included.
"""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import boostkit
from boostkit.criteria import z_loss
from boostkit.data import TrainingData
from boostkit.kernels.histogram import cell_class_sums, cell_pair_sums
from boostkit_adaboost import StumpLearner
from boostkit_adaboost.term_kernels import present_pair_sums, present_pair_sums_parallel
from boostkit_adaboost.terms import TermPresence, TermStump, TermStumpLearner

SPARSE_CLASSES = tuple(
    getattr(sp, name) for name in ("csr_matrix", "csc_matrix", "coo_matrix", "csr_array",
                                   "csc_array", "coo_array") if hasattr(sp, name)
)
TERM_RECIPE = {"proposal": "term-stump", "calibration": "domain-partition",
               "reweighting": "exponential"}


def _state(X, y, weights=None, *, loss=None, n_jobs=1) -> boostkit.BoostState:
    """A BoostState as the engine builds it; ``loss`` answers boostkit_partition_loss."""
    sparse = hasattr(X, "tocsr") and hasattr(X, "nnz")
    data = TrainingData(X if sparse else np.asarray(X, dtype=np.float64), np.asarray(y))
    d1 = data.initial_weights
    hook = None if loss is None else types.SimpleNamespace(
        boostkit_partition_loss=lambda wpos, wneg, n_columns=1: loss(wpos, wneg))
    return boostkit.BoostState(
        data=data,
        weights=d1.copy() if weights is None else np.asarray(weights, dtype=np.float64),
        margin=np.zeros(d1.shape),
        initial_weights=d1,
        n_rounds=1,
        rng=np.random.default_rng(0),
        hook=hook,
        n_jobs=n_jobs,
    )


# A 5 x 3 matrix of term counts. Row 4 stores an explicit 0 for term 1 and a negative value for
# term 0: neither is "present" (x > 0).
#       t0  t1  t2
#   0 [  2,  0,  1]
#   1 [  0,  1,  0]
#   2 [  1,  3,  0]
#   3 [  0,  0,  0]
#   4 [ -1, (0), 5]
TINY = sp.csr_matrix(
    (np.array([2.0, 1.0, 1.0, 1.0, 3.0, -1.0, 0.0, 5.0]),
     np.array([0, 2, 1, 0, 1, 0, 1, 2]),
     np.array([0, 2, 3, 5, 5, 8])),
    shape=(5, 3),
)
TINY_DENSE = np.array([[2, 0, 1], [0, 1, 0], [1, 3, 0], [0, 0, 0], [-1, 0, 5]], dtype=float)


def test_tiny_matrix_is_what_the_comment_says():
    assert TINY.nnz == 8 and TINY.has_canonical_format
    assert np.array_equal(TINY.toarray(), TINY_DENSE)


def test_presence_rows_per_term():
    presence = TermPresence.of(TINY)
    # t0: rows 0, 2 (row 4 is -1); t1: rows 1, 2 (row 4 is a stored 0); t2: rows 0, 4
    assert presence.indptr.tolist() == [0, 2, 4, 6]
    assert presence.rows.tolist() == [0, 2, 1, 2, 0, 4]
    dense = TermPresence.of(TINY_DENSE)
    assert np.array_equal(dense.indptr, presence.indptr)
    assert np.array_equal(dense.rows, presence.rows)


def test_binary_cell_sums_by_hand():
    # y = +, -, +, -, +  and  D = .1, .2, .3, .15, .25
    y = [1, -1, 1, -1, 1]
    w = np.array([0.1, 0.2, 0.3, 0.15, 0.25])
    wneg, wpos = TermPresence.of(TINY).cell_sums(w, (np.array(y) > 0).astype(np.uint8))
    # (absent, present) per term. W+ = .65, W- = .35 in total.
    # t0 present {0, 2}: W+ = .1 + .3, W- = 0;     absent {1, 3, 4}: W+ = .25, W- = .2 + .15
    # t1 present {1, 2}: W+ = .3, W- = .2;        absent {0, 3, 4}: W+ = .1 + .25, W- = .15
    # t2 present {0, 4}: W+ = .1 + .25, W- = 0;   absent {1, 2, 3}: W+ = .3, W- = .35
    np.testing.assert_allclose(wpos, [[0.25, 0.4], [0.35, 0.3], [0.3, 0.35]], atol=1e-15)
    np.testing.assert_allclose(wneg, [[0.35, 0.0], [0.15, 0.2], [0.35, 0.0]], atol=1e-15)

    # weighted error (sum of the minority weights): t0 .25, t1 .15 + .2, t2 .3 -> t0
    candidate = TermStumpLearner(criterion="error").boostkit_propose(_state(TINY, y, w))
    assert candidate.hypothesis.feature == 0
    assert candidate.cells.tolist() == [1, 0, 1, 0, 0]
    # absent: .25 < .35 -> -1; present: .4 > 0 -> +1
    assert candidate.hypothesis.cell_scores.tolist() == [-1.0, 1.0]
    assert candidate.scores.tolist() == [1.0, -1.0, 1.0, -1.0, -1.0]
    np.testing.assert_allclose(candidate.cell_wpos, [0.25, 0.4])
    np.testing.assert_allclose(candidate.cell_wneg, [0.35, 0.0], atol=1e-15)
    # Z = 2 sum_j sqrt(W+_j W-_j): t0 2 sqrt(.25 .35) = .592, t1 .948, t2 2 sqrt(.3 .35) = .648
    z_choice = TermStumpLearner(criterion="z").boostkit_propose(_state(TINY, y, w))
    assert z_choice.hypothesis.feature == 0
    # criterion=None asks the calibration's loss
    asked = TermStumpLearner().boostkit_propose(_state(TINY, y, w, loss=z_loss))
    assert asked.hypothesis.feature == 0


def test_multiclass_cell_sums_by_hand():
    # labels 0, 1, 2, 1, 0; D(i, l) = (3 i + l + 1) / 120, i.e. the rows below over 120:
    #   0: [1, 2, 3] (+ at l0)   1: [4, 5, 6] (+ at l1)   2: [7, 8, 9] (+ at l2)
    #   3: [10, 11, 12] (+ at l1)   4: [13, 14, 15] (+ at l0)
    y = [0, 1, 2, 1, 0]
    w = np.arange(1.0, 16.0).reshape(5, 3) / 120
    state = _state(TINY, y, w)
    assert state.data.is_pos.shape == (5, 3)
    wneg, wpos = TermPresence.of(TINY).cell_sums(w, state.data.is_pos)
    assert wneg.shape == wpos.shape == (3, 2, 3)  # (terms, cells: absent/present, classes)
    expected_pos = np.array([
        [[13, 16, 0], [1, 0, 9]],    # t0: absent {1, 3, 4}, present {0, 2}
        [[14, 11, 0], [0, 5, 9]],    # t1: absent {0, 3, 4}, present {1, 2}
        [[0, 16, 9], [14, 0, 0]],    # t2: absent {1, 2, 3}, present {0, 4}
    ]) / 120
    expected_neg = np.array([
        [[14, 14, 33], [7, 10, 3]],
        [[10, 16, 30], [11, 8, 6]],
        [[21, 8, 18], [0, 16, 18]],
    ]) / 120
    np.testing.assert_allclose(wpos, expected_pos, atol=1e-15)
    np.testing.assert_allclose(wneg, expected_neg, atol=1e-15)
    # Each term's two cells add up to the class totals W+_l = (14, 16, 9), W-_l = (21, 24, 36)
    np.testing.assert_allclose(wpos.sum(axis=1), np.tile([14, 16, 9], (3, 1)) / 120)
    np.testing.assert_allclose(wneg.sum(axis=1), np.tile([21, 24, 36], (3, 1)) / 120)

    # AdaBoost.MH's Z = 2 sum_{j,l} sqrt(W+_jl W-_jl), in units of 1/120:
    # t0 2 (sqrt 7 + sqrt 27 + sqrt 182 + sqrt 224) = 72.6, t1 77.5,
    # t2 2 (sqrt 128 + sqrt 162) = 48.1
    candidate = TermStumpLearner(criterion="z").boostkit_propose(state)
    assert candidate.hypothesis.feature == 2
    assert candidate.cells.tolist() == [1, 0, 0, 0, 1]
    # phi(x) = -1 absent, +1 present; the per-class values are the calibration's business
    assert candidate.hypothesis.cell_scores.tolist() == [-1.0, 1.0]
    assert candidate.scores.tolist() == [1.0, -1.0, -1.0, -1.0, 1.0]
    np.testing.assert_allclose(candidate.cell_wpos, expected_pos[2], atol=1e-15)
    np.testing.assert_allclose(candidate.cell_wneg, expected_neg[2], atol=1e-15)
    asked = TermStumpLearner().boostkit_propose(
        _state(TINY, y, w, loss=lambda p, n: 2.0 * np.sqrt(p * n).sum(axis=(-2, -1))))
    assert asked.hypothesis.feature == 2


def _naive_present_sums(X_dense, weights, is_pos):
    present = (X_dense > 0).astype(np.float64)  # (n, d)
    return present.T @ (weights * (1 - is_pos)), present.T @ (weights * is_pos)


@st.composite
def sparse_problems(draw):
    """A random sparse matrix (negative values, stored zeros, empty and full columns) with random
    pair weights over C columns (C = 1: binary)."""
    n = draw(st.integers(2, 30))
    d = draw(st.integers(1, 12))
    c = draw(st.sampled_from([1, 3, 5]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    density = draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(-2, 4, size=k).astype(float))
    labels = rng.integers(0, max(c, 2), size=n)
    is_pos = (labels[:, None] == np.arange(c)).astype(np.uint8) if c > 1 else \
        (labels == 1).astype(np.uint8)
    weights = rng.random(is_pos.shape) * (rng.random(is_pos.shape) < 0.8)
    weights /= max(weights.sum(), 1e-300)
    return X, weights, is_pos


@settings(max_examples=200, deadline=None)
@given(sparse_problems())
def test_cell_sums_match_numpy_and_add_up_to_the_class_totals(problem):
    X, weights, is_pos = problem
    presence = TermPresence.of(X)
    wneg, wpos = presence.cell_sums(weights, is_pos)
    d = X.shape[1]
    w2, p2 = weights.reshape(X.shape[0], -1), is_pos.reshape(X.shape[0], -1)
    neg, pos = _naive_present_sums(X.toarray(), w2, p2)
    shape = (d, 2) if weights.ndim == 1 else (d, 2, weights.shape[1])
    assert wneg.shape == wpos.shape == shape
    present = (slice(None), 1)
    np.testing.assert_allclose(wneg[present].reshape(d, -1), neg, atol=1e-15)
    np.testing.assert_allclose(wpos[present].reshape(d, -1), pos, atol=1e-15)
    # per class, the two cells of every term add up to the class totals
    total_pos = (w2 * p2).sum(axis=0)
    total_neg = (w2 * (1 - p2)).sum(axis=0)
    np.testing.assert_allclose(wpos.sum(axis=1).reshape(d, -1), np.tile(total_pos, (d, 1)),
                               atol=1e-14)
    np.testing.assert_allclose(wneg.sum(axis=1).reshape(d, -1), np.tile(total_neg, (d, 1)),
                               atol=1e-14)
    assert (wneg >= 0).all() and (wpos >= 0).all()
    # the parallel kernel is the serial one, bit for bit
    serial = np.empty((d, w2.shape[1])), np.empty((d, w2.shape[1]))
    threaded = np.empty_like(serial[0]), np.empty_like(serial[1])
    present_pair_sums(presence.indptr, presence.rows, w2, p2, *serial)
    present_pair_sums_parallel(presence.indptr, presence.rows, w2, p2, *threaded)
    assert np.array_equal(serial[0], threaded[0]) and np.array_equal(serial[1], threaded[1])


@settings(max_examples=100, deadline=None)
@given(sparse_problems(), st.sampled_from(["z", "error", "gini", "entropy"]))
def test_candidate_sums_are_the_sums_over_its_cells(problem, criterion):
    X, weights, is_pos = problem
    n = X.shape[0]
    y = is_pos.argmax(axis=1) if is_pos.ndim == 2 else np.where(is_pos > 0, 1, -1)
    # TrainingData needs every class to occur; the sums do not depend on the labels' names
    labels = np.concatenate([y, np.arange(is_pos.shape[1])]) if is_pos.ndim == 2 else \
        np.concatenate([y, [-1, 1]])
    X_full = sp.vstack([X, sp.csr_matrix((len(labels) - n, X.shape[1]))], format="csr")
    w_full = np.concatenate([weights, np.zeros((len(labels) - n,) + weights.shape[1:])])
    state = _state(X_full, labels, w_full)
    candidate = TermStumpLearner(criterion=criterion).boostkit_propose(state)
    cells = np.asarray(candidate.cells, dtype=np.intp)
    if weights.ndim == 1:
        wneg, wpos = cell_class_sums(cells, w_full, state.data.is_pos, 2)
    else:
        wneg, wpos = cell_pair_sums(cells, w_full, state.data.is_pos, 2)
    np.testing.assert_allclose(candidate.cell_wneg, wneg, atol=1e-14)
    np.testing.assert_allclose(candidate.cell_wpos, wpos, atol=1e-14)
    # and the hypothesis puts the training examples in the same cells, dense or sparse
    assert np.array_equal(candidate.hypothesis.cells(X_full), cells)
    assert np.array_equal(candidate.hypothesis.cells(X_full.toarray()), cells)
    assert np.array_equal(candidate.hypothesis.scores(X_full), candidate.scores)


def _binary_features(seed=0, n=300, d=15):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < rng.uniform(0.05, 0.6, size=d)).astype(np.float64)
    logit = X @ rng.normal(0, 1.5, d) - 1.0 + rng.normal(0, 1, n)
    return X, np.where(logit > 0, 1, -1), rng


@pytest.mark.parametrize("criterion", ["z", "error", "gini", "entropy"])
def test_same_choice_as_the_dense_stump_on_binary_features(criterion):
    X, y, rng = _binary_features()
    for _ in range(20):
        w = rng.random(X.shape[0])
        w /= w.sum()
        state = _state(X, y, w)
        stump = StumpLearner(criterion=criterion).boostkit_propose(state)
        term = TermStumpLearner(criterion=criterion).boostkit_propose(
            _state(sp.csr_matrix(X), y, w))
        assert term.hypothesis.feature == stump.hypothesis.feature
        assert np.array_equal(np.asarray(term.cells), np.asarray(stump.cells))
        np.testing.assert_allclose(term.cell_wneg, stump.cell_wneg, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(term.cell_wpos, stump.cell_wpos, rtol=1e-12, atol=1e-15)
        assert np.array_equal(term.hypothesis.cell_scores, stump.hypothesis.cell_scores)


@pytest.mark.parametrize("calibration", ["domain-partition", "constant-alpha"])
def test_boosting_term_stumps_is_boosting_stumps_on_binary_features(calibration):
    X, y, _ = _binary_features(seed=1)
    stumps = boostkit.Booster(proposal="stump", calibration=calibration,
                              reweighting="exponential", n_rounds=30).fit(X, y)
    terms = boostkit.Booster(proposal="term-stump", calibration=calibration,
                             reweighting="exponential", n_rounds=30).fit(sp.csr_matrix(X), y)
    assert [h.feature for h in terms.hypotheses] == [h.feature for h in stumps.hypotheses]
    np.testing.assert_allclose(terms.decision_function(sp.csr_matrix(X)),
                               stumps.decision_function(X), rtol=1e-9, atol=1e-12)


def test_constant_hypothesis_when_no_term_splits():
    X = np.array([[0.0, 1.0], [0.0, 2.0], [-1.0, 3.0]])  # t0 never present, t1 always
    candidate = TermStumpLearner(criterion="z").boostkit_propose(_state(X, [1, -1, 1]))
    assert candidate.hypothesis.feature == -1
    assert candidate.hypothesis.describe() == "constant +1"
    assert np.asarray(candidate.cells).tolist() == [0, 0, 0]
    np.testing.assert_allclose(candidate.cell_wpos, [2 / 3, 0.0])
    np.testing.assert_allclose(candidate.cell_wneg, [1 / 3, 0.0])
    assert candidate.hypothesis.cells(sp.csr_matrix(X)).tolist() == [0, 0, 0]


def _messy_formats():
    """The same 4 x 3 matrix in every sparse format, and as CSR with duplicate entries."""
    dense = np.array([[0, 2, 0], [1, 0, -1], [0, 0, 0], [3, 1, 0]], dtype=float)
    yield "dense", dense
    for cls in SPARSE_CLASSES:
        yield cls.__name__, cls(dense)
    # duplicates: (1, 0) = 2 - 1 = 1 (present), (0, 1) = 2 + 0, (3, 0) = 4 - 1,
    # (2, 2) = 1 - 1 = 0 (absent), (3, 1) = -1 + 2 = 1 (present)
    rows = np.array([1, 1, 0, 0, 3, 3, 2, 2, 3, 3, 1])
    cols = np.array([0, 0, 1, 1, 0, 0, 2, 2, 1, 1, 2])
    vals = np.array([2, -1, 2, 0, 4, -1, 1, -1, -1, 2, -1], dtype=float)
    order = np.argsort(rows, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=4))])
    messy = sp.csr_matrix((vals[order], cols[order], indptr), shape=(4, 3))
    assert not messy.has_canonical_format
    yield "csr with duplicates", messy


@pytest.mark.parametrize("feature", [0, 1, 2])
def test_the_hypothesis_reads_every_format_without_densifying(feature, never_densify):
    expected = {0: [0, 1, 0, 1], 1: [1, 0, 0, 1], 2: [0, 0, 0, 0]}[feature]
    stump = TermStump(feature, [-0.5, 2.0])
    for name, X in _messy_formats():
        assert stump.cells(X).tolist() == expected, name
        assert stump.scores(X).tolist() == [2.0 if c else -0.5 for c in expected], name


def _term_counts(seed=0, n=200, d=40, n_classes=2):
    """Sparse term counts whose class depends on a few terms."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_classes, size=n)
    rate = np.full((n_classes, d), 0.05)
    for c in range(n_classes):
        rate[c, 3 * c:3 * c + 3] = 0.7
    counts = rng.poisson(rate[labels])
    X = sp.csr_matrix(counts.astype(np.float64))
    y = np.where(labels == 1, 1, -1) if n_classes == 2 else labels
    return X, y


def test_a_sparse_fit_is_the_dense_fit_and_never_densifies(tmp_path, monkeypatch):
    X, y = _term_counts()
    dense = boostkit.Booster(**TERM_RECIPE, n_rounds=25).fit(X.toarray(), y)
    X_test, _ = _term_counts(seed=1)
    expected = dense.decision_function(X_test.toarray())

    def refuse(self, *args, **kwargs):
        raise AssertionError("a sparse matrix was densified")

    for cls in SPARSE_CLASSES:
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)
    model = boostkit.Booster(**TERM_RECIPE, n_rounds=25).fit(X, y)
    assert [h.feature for h in model.hypotheses] == [h.feature for h in dense.hypotheses]
    assert np.array_equal(model.decision_function(X_test), expected)
    assert np.array_equal(model.decision_function(X_test.tocsc()), expected)
    assert (model.predict(X) == y).mean() > 0.8
    loaded = boostkit.load_model(model.save(tmp_path / "terms.npz"))
    assert np.array_equal(loaded.decision_function(X_test), expected)
    assert all(isinstance(h, TermStump) for h in loaded.hypotheses)


def test_threads_do_not_change_the_model():
    X, y = _term_counts(seed=2)
    one = boostkit.Booster(**TERM_RECIPE, n_rounds=10).fit(X, y)
    many = boostkit.Booster(**TERM_RECIPE, n_rounds=10, n_jobs=2).fit(X, y)
    # the term sums are the same bit for bit; the engine's threaded margin update may round
    # differently, so the models agree to rounding
    assert [h.feature for h in one.hypotheses] == [h.feature for h in many.hypotheses]
    np.testing.assert_allclose(one.decision_function(X), many.decision_function(X), rtol=1e-12)


def test_capabilities_are_known_and_sparse_input_is_accepted():
    known = boostkit.get_registry().capabilities()
    assert TermStumpLearner.provides <= set(known)
    # the proposal that does not declare sparse input is refused on the same data
    X, y = _term_counts()
    with pytest.raises(boostkit.RecipeError, match="sparse"):
        boostkit.Booster(proposal="stump", calibration="domain-partition",
                         reweighting="exponential", n_rounds=2).fit(X, y)


# -- several classes (AdaBoost.MH) -----------------------------------------------------------


def test_multiclass_fit_and_predict_never_densify(never_densify, tmp_path):
    X, y = _term_counts(seed=3, n=400, d=30, n_classes=4)
    model = boostkit.Booster(**TERM_RECIPE, n_rounds=40).fit(X, y)
    margins = model.decision_function(X)
    assert margins.shape == (X.shape[0], 4)
    assert np.isfinite(margins).all()
    accuracy = (model.predict(X) == y).mean()
    assert accuracy > 0.8, accuracy
    # every round is a term-presence stump with phi = -1 absent / +1 present
    assert all(isinstance(h, TermStump) and h.cell_scores.tolist() == [-1.0, 1.0]
               for h in model.hypotheses)
    loaded = boostkit.load_model(model.save(tmp_path / "terms-mh.npz"))
    assert np.array_equal(loaded.decision_function(X), margins)


def test_multiclass_round_sums_add_up_to_the_class_totals():
    X, y = _term_counts(seed=4, n=300, d=25, n_classes=3)
    seen = []

    def check(state, record):
        # the weights the next round's candidate will be built from
        wneg, wpos = TermPresence.of(X).cell_sums(state.weights, state.data.is_pos)
        total_pos = (state.weights * state.data.is_pos).sum(axis=0)
        total = state.weights.sum(axis=0)
        np.testing.assert_allclose(wpos.sum(axis=1), np.tile(total_pos, (X.shape[1], 1)),
                                   atol=1e-13)
        np.testing.assert_allclose((wpos + wneg).sum(axis=1), np.tile(total, (X.shape[1], 1)),
                                   atol=1e-13)
        assert math.isclose(total.sum(), 1.0, rel_tol=1e-9)
        seen.append(record.round)

    boostkit.Booster(**TERM_RECIPE, n_rounds=8, callbacks=[check]).fit(X, y)
    assert seen == list(range(1, 9))
