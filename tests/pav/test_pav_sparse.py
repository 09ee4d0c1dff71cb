"""The text learners of Wilbur et al. 2005, section 7 on sparse term data.

``cmass`` (7.1), ``nscore`` (7.2, eq. 49 with IDF weights) and ``binary-naive-bayes`` declare
"sparse-input": fitted on a CSR matrix of term counts they give the model the dense fit gives (to
rounding), and neither fitting nor predicting ever densifies the matrix.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import boostkit
from boostkit.capabilities import SPARSE_INPUT, capabilities_of
from boostkit_pav.learners import (
    BinaryNaiveBayes,
    Cmass,
    NaiveBayesScore,
    NeighborSimilarity,
    Nscore,
    Projection,
    ScoreColumns,
)

SPARSE_CLASSES = (sp.csr_matrix, sp.csr_array, sp.csc_matrix, sp.coo_matrix)


def term_counts(n_documents=240, n_terms=1500, seed=0):
    """A CSR (documents x terms) count matrix with Zipf-like term frequencies, in which the
    positive documents use 30 topic terms eight times as often, and the labels."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n_documents) < 0.4, 1, -1)
    background = 1.0 / np.arange(1, n_terms + 1) ** 1.1
    topic = background.copy()
    topic[20 + rng.choice(200, 30, replace=False)] *= 8.0
    rows, columns = [], []
    for i in range(n_documents):
        frequencies = topic if y[i] > 0 else background
        words = rng.choice(n_terms, size=5 + rng.poisson(40), p=frequencies / frequencies.sum())
        rows.extend([i] * words.shape[0])
        columns.extend(words)
    ones = np.ones(len(rows))
    counts = sp.coo_matrix((ones, (rows, columns)), shape=(n_documents, n_terms)).tocsr()
    return counts, y


X_SPARSE, Y = term_counts()
X_DENSE = X_SPARSE.toarray()


def assert_same_scores(sparse, dense):
    scale = max(np.abs(dense).max(), 1.0)
    np.testing.assert_allclose(sparse, dense, rtol=1e-12, atol=1e-12 * scale)


PROPOSALS = [
    "cmass",
    "cmass(standardize=True)",
    "nscore",
    "nscore(xlap=2)",
    "binary-naive-bayes",
    "binary-naive-bayes(threshold=1, min_weight=0.5)",
]


@pytest.mark.parametrize("calibration", ["pav", "sigmoid"])
@pytest.mark.parametrize("proposal", PROPOSALS)
def test_a_sparse_fit_is_the_dense_fit(proposal, calibration, never_densify):
    recipe = f"proposal={proposal} calibration={calibration} reweighting=exponential"
    dense = boostkit.Booster(recipe, n_rounds=15, random_state=0).fit(X_DENSE, Y)
    sparse = boostkit.Booster(recipe, n_rounds=15, random_state=0).fit(X_SPARSE, Y)
    assert sparse.n_rounds == dense.n_rounds == 15
    assert [r.hypothesis for r in sparse.records] == [r.hypothesis for r in dense.records]
    expected = dense.decision_function(X_DENSE)
    assert_same_scores(sparse.decision_function(X_SPARSE), expected)
    np.testing.assert_array_equal(sparse.predict(X_SPARSE), dense.predict(X_DENSE))
    # either model reads either input
    assert_same_scores(dense.decision_function(X_SPARSE), expected)
    assert_same_scores(sparse.decision_function(X_DENSE), expected)


@pytest.mark.parametrize("calibration", ["pav", "sigmoid"])
def test_naive_bayes_below_zero_counts_the_unstored_zeros_as_present(calibration, never_densify):
    # signed values and threshold -1: a term is present unless its value is -1 or lower, so
    # every entry not stored is present and the absent ones are among the stored
    X_dense = X_DENSE * np.where(np.random.default_rng(5).random(X_DENSE.shape) < 0.5, -1.0, 1.0)
    X = sp.csr_matrix(X_dense)
    recipe = (f"proposal=binary-naive-bayes(threshold=-1) calibration={calibration} "
              "reweighting=exponential")
    dense = boostkit.Booster(recipe, n_rounds=10).fit(X_dense, Y)
    sparse = boostkit.Booster(recipe, n_rounds=10).fit(X, Y)
    assert_same_scores(sparse.decision_function(X), dense.decision_function(X_dense))


@pytest.mark.parametrize("proposal", [Cmass, Nscore, BinaryNaiveBayes])
def test_the_text_learners_declare_sparse_input(proposal):
    needs, provides, _ = capabilities_of(proposal())
    assert SPARSE_INPUT in provides and "real-scores" in provides
    assert needs <= {"non-negative-features"}  # nscore reads term counts


def test_score_columns_still_refuse_sparse_input():
    assert SPARSE_INPUT not in capabilities_of(ScoreColumns())[1]
    with pytest.raises(boostkit.RecipeError, match="does not handle sparse input"):
        boostkit.Booster("pav-adaboost-finite").fit(X_SPARSE, Y)


@pytest.mark.parametrize("make", [
    Cmass, lambda: Cmass(standardize=True), Nscore, lambda: Nscore(alpha=0.05, decay=0.3),
    BinaryNaiveBayes, lambda: BinaryNaiveBayes(threshold=2.0, smoothing=0.01, prior=False),
    lambda: BinaryNaiveBayes(threshold=-1.0),
])
def test_each_candidate_matches_its_dense_twin(make, make_state, never_densify):
    weights = np.random.default_rng(3).random(Y.shape[0])
    weights /= weights.sum()
    states = make_state(X_DENSE, Y, weights), make_state(X_SPARSE, Y, weights)
    assert states[1].data.is_sparse
    proposals = [make(), make()]
    for proposal, state in zip(proposals, states):
        proposal.boostkit_fit_start(state=state)
    for _ in range(4):
        dense, sparse = (p.boostkit_propose(state=s) for p, s in zip(proposals, states))
        assert sparse.info == dense.info
        assert_same_scores(sparse.scores, dense.scores)
        for field in ("direction", "term_weights", "terms", "weights"):
            if hasattr(dense.hypothesis, field):
                np.testing.assert_allclose(getattr(sparse.hypothesis, field),
                                           getattr(dense.hypothesis, field), rtol=1e-12)
        assert_same_scores(sparse.hypothesis.scores(X_SPARSE), dense.hypothesis.scores(X_DENSE))


def test_duplicate_and_explicitly_zero_entries_mean_what_they_sum_to(never_densify):
    # row 0 stores a duplicate entry (1 + 1) and an explicit zero, row 1 an explicit zero
    counts = sp.csr_matrix((np.array([1.0, 1.0, 0.0, 3.0, 2.0, 0.0, 1.0, 4.0, 2.0, 1.0]),
                            np.array([0, 0, 1, 2, 0, 2, 3, 1, 2, 3]),
                            np.array([0, 4, 7, 10])), shape=(3, 4))
    dense = np.array([[2.0, 0.0, 3.0, 0.0], [2.0, 0.0, 0.0, 1.0], [0.0, 4.0, 2.0, 1.0]])
    X = sp.vstack([counts] * 4, format="csr")
    assert not X.has_canonical_format and X.nnz == 40
    X_dense = np.vstack([dense] * 4)
    y = np.array([1, -1, 1] * 3 + [-1, 1, -1])
    for recipe in ("proposal=nscore calibration=sigmoid reweighting=exponential",
                   "proposal=binary-naive-bayes(threshold=1.5) calibration=sigmoid "
                   "reweighting=exponential",
                   "proposal=cmass(standardize=True) calibration=sigmoid reweighting=exponential"):
        expected = boostkit.Booster(recipe, n_rounds=3).fit(X_dense, y).decision_function(X_dense)
        model = boostkit.Booster(recipe, n_rounds=3).fit(X, y)
        assert_same_scores(model.decision_function(X), expected)


@pytest.mark.parametrize("cls", SPARSE_CLASSES)
def test_the_hypotheses_read_every_sparse_format(cls, never_densify):
    X = cls(X_SPARSE[:50])
    dense = X_DENSE[:50]
    terms = np.flatnonzero(dense[7])
    hypotheses = [
        Projection(np.linspace(-1.0, 1.0, dense.shape[1])),
        NaiveBayesScore(0.0, np.linspace(-2.0, 2.0, dense.shape[1]), 0.5),
        NaiveBayesScore(-0.5, np.linspace(-2.0, 2.0, dense.shape[1]), 0.5),
        NeighborSimilarity(terms, np.linspace(0.5, 2.0, terms.shape[0]), -1.0, 0.0044, 0.7),
        NeighborSimilarity(np.array([], dtype=np.int64), np.array([]), 1.0, 0.0044, 0.7),
    ]
    for h in hypotheses:
        assert_same_scores(h.scores(X), h.scores(dense))


@settings(max_examples=60, deadline=None)
@given(
    counts=st.lists(st.integers(0, 3), min_size=24, max_size=24),
    threshold=st.sampled_from([-1.0, 0.0, 0.5, 2.0]),
    alpha=st.floats(0.0, 0.5),
    decay=st.floats(0.05, 1.0),
)
def test_sparse_scores_equal_dense_scores(counts, threshold, alpha, decay):
    dense = np.array(counts, dtype=np.float64).reshape(4, 6)
    X = sp.csr_matrix(dense)
    weights = np.linspace(-1.0, 1.5, 6)
    nb = NaiveBayesScore(threshold, weights, 0.25)
    assert_same_scores(nb.scores(X), nb.scores(dense))
    similarity = NeighborSimilarity(np.array([0, 2, 5]), weights[:3] + 2.0, 1.0, alpha, decay)
    assert_same_scores(similarity.scores(X), similarity.scores(dense))


def test_nscore_refuses_negative_sparse_counts_before_fitting():
    X = sp.csr_matrix(np.array([[1.0, 3.0], [0.0, 2.0], [1.0, 0.0], [0.0, -1.5]]))
    with pytest.raises(boostkit.RecipeError, match=r"proposal 'nscore' needs non-negative "
                       r"features .* column 1 holds -1\.5 \(row 3\)"):
        boostkit.Booster(proposal="nscore", calibration="pav", reweighting="exponential").fit(
            X, [1, -1, 1, -1])
