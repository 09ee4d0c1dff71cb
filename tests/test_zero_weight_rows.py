"""Rows of weight 0 are removed, values and all: extreme values there change no model.

Every registered algorithm is fitted twice with the same seed, once with rows of weight 0
holding extreme values (+-1e300, 1.7e308, 1e-300, the smallest subnormal, and NaN where the
recipe takes missing values) inserted among the data, once without them. The two models must
be the same: the same rounds and, on the other rows, the same margins bit for bit. Rows of
weight 0 are taken out before any component sees the data, so a recipe that samples rows or
shuffles draws the same random stream in both fits, and the comparison is exact for them too.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import boostkit
from boostkit.capabilities import handles_missing_values
from boostkit.datasets import load
from boostkit.validation import holdout_data

ALGORITHMS = sorted(boostkit.get_registry().algorithms())
# Shrinking a failure refits hundreds of times: the drawn rows are reported unshrunk.
QUICK = settings(max_examples=4, deadline=None, derandomize=True,
                 phases=(Phase.explicit, Phase.generate))
EXTREMES = (1e300, -1e300, 1.7e308, -1.7e308, 1e-300, -1e-300, 5e-324, 0.0, 1e150)


@pytest.fixture(scope="module")
def spam():
    data = load("spambase")
    rows = np.random.default_rng(0).permutation(len(data.y))[:120]
    return data.X[rows], data.binary_target()[rows]


def _fit(name, X, y, sample_weight=None, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # one-pass pools that run out say so
        return boostkit.Booster(name, n_rounds=6, random_state=3, **params).fit(
            X, y, sample_weight)


def _with_zero_rows(draw, X, y, missing: bool):
    """``(X', y', weights, kept)``: X with rows of weight 0 of extreme values inserted."""
    n_extra = draw(st.integers(1, 6))
    values = st.sampled_from(EXTREMES + ((np.nan,) if missing else ()))
    extra = np.array([[draw(values) for _ in range(X.shape[1])] for _ in range(n_extra)])
    labels = np.array([draw(st.sampled_from(np.unique(y).tolist())) for _ in range(n_extra)])
    at = np.sort(np.array([draw(st.integers(0, X.shape[0])) for _ in range(n_extra)]))
    X_all = np.insert(X, at, extra, axis=0)
    y_all = np.insert(y, at, labels)
    kept = np.ones(X_all.shape[0], dtype=bool)
    kept[at + np.arange(n_extra)] = False
    # Weights of every size, whose sums round: totals must be taken over the rows kept.
    scale = draw(st.sampled_from([1.0, 1e-3, 7.0]))
    weights = np.where(kept, scale * np.random.default_rng(n_extra).uniform(0.1, 3.0, len(kept)),
                       0.0)
    return X_all, y_all, weights, kept


def _assert_same_model(with_rows, removed, X):
    assert with_rows.n_rounds == removed.n_rounds
    assert with_rows.stop_reason == removed.stop_reason
    np.testing.assert_array_equal(with_rows.decision_function(X), removed.decision_function(X))


@pytest.mark.parametrize("name", ALGORITHMS)
@QUICK
@given(data=st.data())
def test_extreme_values_in_rows_of_zero_weight_change_no_model(name, spam, data):
    X, y = spam
    registry = boostkit.get_registry()
    missing = handles_missing_values(registry.instantiate(registry.resolve(name)))
    X_all, y_all, weights, kept = _with_zero_rows(data.draw, X, y, missing)
    removed = _fit(name, X, y, weights[kept])
    _assert_same_model(_fit(name, X_all, y_all, weights), removed, X)


@pytest.mark.parametrize("name", ["adaboost-mh", "samme", "pav-adaboost", "rankboost"])
@settings(QUICK, max_examples=2)
@given(data=st.data())
def test_several_classes_with_rows_of_zero_weight(name, spam, data):
    """Native multi-class and one-vs-rest fits remove them too."""
    X, _ = spam
    y = np.digitize(X[:, 54], np.quantile(X[:, 54], [1 / 3, 2 / 3]))  # three classes
    registry = boostkit.get_registry()
    missing = handles_missing_values(registry.instantiate(registry.resolve(name)))
    X_all, y_all, weights, kept = _with_zero_rows(data.draw, X, y, missing)
    removed = _fit(name, X, y, weights[kept], multiclass="auto")
    _assert_same_model(_fit(name, X_all, y_all, weights, multiclass="auto"), removed, X)


def test_pav_adaboost_ignores_huge_values_in_rows_of_zero_weight(spam):
    """The issue's reproducer: 1e300 in rows of weight 0 made pav-adaboost's standardisation
    see no spread, and the fit stopped at 0 rounds."""
    X, y = spam
    X_all = np.vstack([X, np.full((10, X.shape[1]), 1e300)])
    y_all = np.concatenate([y, np.ones(10)])
    weights = np.r_[np.ones(len(y)), np.zeros(10)]
    model = _fit("pav-adaboost", X_all, y_all, weights)
    assert model.n_rounds == _fit("pav-adaboost", X, y).n_rounds > 0


def test_a_holdout_names_the_rows_of_the_given_X(spam):
    """The rows held out for validation are indices into the X given to fit, rows of weight 0
    (never held out, never trained on) counted."""
    X, y = spam
    X_all = np.vstack([np.full((5, X.shape[1]), 1e300), X])
    y_all = np.concatenate([np.ones(5), y])
    weights = np.r_[np.zeros(5), np.ones(len(y))]
    data, validation = holdout_data(X_all, y_all, weights, 0.25, max_bins=255,
                                    rng=np.random.default_rng(0))
    assert data.n_samples + validation.rows.shape[0] == len(y)
    assert validation.rows.min() >= 5
    np.testing.assert_array_equal(validation.X, X_all[validation.rows])


@pytest.mark.parametrize("name", ["boostexter", "pav-adaboost", "naive-bayes"])
def test_sparse_X_with_rows_of_zero_weight(name):
    sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(0)
    X = (rng.random((200, 30)) < 0.1) * rng.integers(1, 5, (200, 30)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] > 0, 1, -1)
    X_all = np.vstack([X, np.full((3, 30), 1e300)])
    weights = np.r_[np.ones(200), 0.0, 0.0, 0.0]
    with_rows = _fit(name, sparse.csr_matrix(X_all), np.r_[y, 1, -1, 1], weights)
    _assert_same_model(with_rows, _fit(name, sparse.csr_matrix(X), y), sparse.csr_matrix(X))


def test_categories_seen_only_in_rows_of_zero_weight_change_no_prediction():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    codes = rng.choice(list("abcd"), 300)
    table = pd.DataFrame({"x": rng.normal(size=300), "c": codes})
    y = np.where((codes == "a") | (table.x > 1), 1, -1)
    extra = pd.DataFrame({"x": [1e300, -1e300], "c": ["z", "y"]})
    with_rows = _fit("real-adaboost", pd.concat([table, extra], ignore_index=True),
                     np.r_[y, 1, -1], np.r_[np.ones(300), 0.0, 0.0])
    _assert_same_model(with_rows, _fit("real-adaboost", table, y), table)
